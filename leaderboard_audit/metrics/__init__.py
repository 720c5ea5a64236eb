"""Pure, vectorized numpy functions, one per quantity of AUDITS.md (no pytest here)."""
