"""collect/engines."""
