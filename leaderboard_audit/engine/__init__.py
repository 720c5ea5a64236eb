"""The audit engine: records + settings -> report-v1, serially or in processes."""
