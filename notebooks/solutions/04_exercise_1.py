# Which gradient accumulation counts each schedule accepts with 3 stages in training.
from ipu_teach import schedules

for schedule_name in ("Grouped", "Interleaved", "Sequential"):
    allowed = []
    for count in range(1, 33):
        try:
            schedules.check_gradient_accumulation(schedule_name, 3, count, training=True)
            allowed.append(count)
        except schedules.PipelineScheduleError:
            pass
    print(f"{schedule_name:<12} {allowed}")
# Grouped: multiples of 2 x 3 = 6; Interleaved: multiples of 3; Sequential: any count.
