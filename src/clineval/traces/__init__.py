"""OpenTelemetry traces: receiving, importing, assembling into conversations, and scoring."""
