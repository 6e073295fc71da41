"""Flink's operations playground on kindling: the click-event generator, the Click Event Count job, the demo."""
