"""The installed wheel's package at work (test/wheel/run.sh): a module built
by `python3 -m coconet build` and one built by coconet.cache from the
installed standard library, called with array.array buffers (no NumPy, no
torch: the environment has nothing but the wheel)."""
import array
import os
import sys

import coconet
import coconet.cache

sys.path.insert(0, sys.argv[1])
import adam  # noqa: E402

assert "site-packages" in coconet.__file__, coconet.__file__
g, w = array.array("f", [1.0] * 8), array.array("f", [1.0] * 8)
m, v = array.array("f", [0.0] * 8), array.array("f", [0.0] * 8)
adam.Step()(g, w, m, v, 0.1, 0.9, 0.999, 1e-8, 1)
# m = 0.1, v = 0.001, mhat = vhat = 1: w = 1 - 0.1 / (1 + 1e-8)
assert all(abs(x - 0.9) < 1e-6 for x in w), list(w)

source = os.path.join(coconet._config.STDLIB_DIR, "optim", "torch.coco")
sgd = coconet.cache.load(source, "torch_sgd", "torch_sgd_rs_c_ag", cache_dir="cache")
g, w = array.array("f", [2.0] * 8), array.array("f", [1.0] * 8)
buf = array.array("f", [0.0] * 8)
one, zero = array.array("f", [1.0]), array.array("f", [0.0])
step = sgd.Step(tables={"layers": [8]})
# on, lr, wd, first, nest; gscale, momentum, damp: w - 0.25 * 2
step(g, w, buf, one, array.array("f", [0.25]), zero, one, zero, 1.0, 0.0, 1.0)
assert all(x == 0.5 for x in w), list(w)
print("ok: the wheel's coconetc, module build, cache and steps")
