# Which gradient accumulation counts each schedule accepts with 3 stages in training.
from ipu_teach import pipeline

for schedule in ("Grouped", "Interleaved", "Sequential"):
    allowed = []
    for accumulation in range(1, 33):
        try:
            pipeline.check_gradient_accumulation(schedule, 3, accumulation, training=True)
            allowed.append(accumulation)
        except pipeline.PipelineScheduleError:
            pass
    print(f"{schedule:<12} {allowed}")
# Grouped: multiples of 2 x 3 = 6; Interleaved: multiples of 3; Sequential: any count.
