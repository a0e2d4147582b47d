# Exercise 2 (solution): steps_per_execution 1 against 8, compared.
# Memory does not change: the same program runs, only in a device loop. The execution report covers one
# execution, so it has 8 times the cycles, and the cycles per step are the same. What steps_per_execution
# saves is the host's launch and sync overhead per execution (notebook 02): it is paid on the host,
# between executions, so it is not part of the device's execution trace.
# The notebook's IPU configuration is back afterwards.
with ipu.system.restored_afterwards():
    one = train(steps_per_execution=1)
    eight = train(steps_per_execution=8)
print(profiling.compare_reports(one, eight))
infeeds = [next(s for s in r.execution.steps if s.kind == "host->device") for r in (one, eight)]
per_step = [r.execution.total_cycles() / infeed.count for r, infeed in zip((one, eight), infeeds)]
print(f"cycles per step: {per_step[0]:,.0f} -> {per_step[1]:,.0f}")
