"""Pure, vectorized numpy functions, one per quantity of docs/spec/AUDITS.md (no pytest here)."""
