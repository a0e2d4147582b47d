# Grouped against Interleaved as the backward pass gets more expensive (4 stages, 16 micro-batches).
from ipu_teach.widgets.pipeline import time_pipeline

for ratio in (1.0, 2.0, 3.0):
    grouped = time_pipeline("Grouped", stages=4, accumulation=16, ratio=ratio).metrics.total_seconds
    interleaved = time_pipeline("Interleaved", stages=4, accumulation=16, ratio=ratio).metrics.total_seconds
    print(f"backward = {ratio:.0f} x forward: Grouped {grouped:5.0f}, Interleaved {interleaved:5.0f} units")
# Equal costs: the same time. Interleaved runs in lock-step with forwards and backwards in the same step, so every
# step lasts as long as a backward pass; the more the two differ, the more time the forward-running IPUs wait.
