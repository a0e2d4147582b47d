# Exercise 3 (solution): each weight update all-reduces every gradient over the IPU-Links; accumulating more
# micro-batches per update pays that less often. The yardstick is one replica at the same accumulation and steps
# per execution (an execution holds whole weight updates: at least 64 micro-batches, a multiple of the
# accumulation). No accumulation brings 16 replicas all the way to one replica's rate: they also share the host's
# links for their images (section 7's last column). The notebook's IPUs are back afterwards.
with ipu.system.restored_afterwards():
    pod_accumulation = 1
    while True:
        pod_steps = max(64, pod_accumulation)
        pod_one = size(resnet50, 4, accumulation=pod_accumulation, steps_per_execution=pod_steps)
        pod_all = size(resnet50, 4, replicas=16, accumulation=pod_accumulation, steps_per_execution=pod_steps)
        pod_scaling = pod_all.samples_per_second / 16 / pod_one.samples_per_second
        print(
            f"accumulation {pod_accumulation:>3}: {pod_all.samples_per_second:>8,.0f} images/s on 16 IPUs, "
            f"{pod_scaling:.1%} of one replica's per IPU"
        )
        if pod_scaling >= 0.8:
            break
        pod_accumulation *= 2
    print(f"smallest: accumulation {pod_accumulation}")
