"""train_step: a training loop's shape, in ITT regions, for syclgraph's
regions (docs/guide/regions.md).

Three steps, each an ITT task "step" holding "forward" and "backward"
(the `ittapi` package: `syclgraph run` makes syclgraph its collector),
around dpnp array operations (DPC++ kernels) and a dpctl copy of the
weights (one USM memcpy).

  syclgraph run -o train -- python examples/train_step.py
  syclgraph report --by region train
"""
import dpctl.memory as dpmem
import dpnp
import ittapi

n = 1 << 16
x = dpnp.linspace(0.0, 1.0, n, dtype=dpnp.float32)
w = dpnp.ones(n, dtype=dpnp.float32)
saved = dpmem.MemoryUSMDevice(n * 4, queue=w.sycl_queue)

for step in range(3):
    with ittapi.task("step"):
        with ittapi.task("forward"):
            y = x * w + 1.0
            loss = float((y * y).sum())
        with ittapi.task("backward"):
            grad = 2.0 * y * x
            w = w - 0.01 * grad
            saved.copy_from_device(w.get_array().usm_data)
    print(f"step {step}: loss {loss:.1f}")
