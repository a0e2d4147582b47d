"""PopVision-like profiling of the simulated IPU (reports, memory per tile, liveness, execution trace)."""
