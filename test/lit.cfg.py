# lit configuration for modelc: tools from the build tree, FileCheck from LLVM 19.
import os
import shutil
import lit.formats

config.name = "modelc"
config.test_format = lit.formats.ShTest(not lit_config.useValgrind)
config.suffixes = [".mlir", ".mdl", ".test"]
# test/sanitized is its own suite, of the sanitizer build (its lit.cfg.py).
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py",
                   "unit", "sanitized"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.modelc_obj_root, "test")

tools_bin = os.path.join(config.modelc_obj_root, "bin")
config.environment["PATH"] = os.pathsep.join(
    [tools_bin, config.llvm_tools_dir, config.environment.get("PATH", "")])
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"
config.substitutions.append(("%modelc_src", config.modelc_src_root))
config.substitutions.append(("%stdlib", os.path.join(config.modelc_src_root, "stdlib")))
config.substitutions.append(("%examples", os.path.join(config.modelc_src_root, "examples")))

def find_python():
    """A Python 3 with NumPy when there is one (the NumPy reference and the
    data generators need it); Debian's python3-numpy serves /usr/bin/python3,
    which need not be the first python3 on PATH."""
    import subprocess
    candidates = [config.python_executable, "/usr/bin/python3", "python3"]
    candidates = [c for c in candidates if c and shutil.which(c)]
    for candidate in candidates:
        if subprocess.run([candidate, "-c", "import numpy"],
                          stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0:
            config.available_features.add("numpy")
            return candidate
    return candidates[0] if candidates else "python3"


config.substitutions.append(("%python", find_python()))

# GPU-only tests say `REQUIRES: cuda-device`; they are skipped without one.
if os.path.exists("/dev/nvidia0") or os.path.exists("/dev/nvidiactl"):
    config.available_features.add("cuda-device")
elif not getattr(lit_config, "modelc_gpu_note_printed", False):
    # One visible line per lit run (this file is loaded per test suite).
    lit_config.modelc_gpu_note_printed = True
    lit_config.note("GPU suite (test/GPU, REQUIRES: cuda-device): skipped: "
                    "no CUDA device")
# %nvdisasm: the CUDA toolkit's, else the one setup.sh installs from PyPI
# (nvidia-cuda-nvdisasm) in MODELC_TOOLS_DIR; tests of the SASS need it.
tools_dir = os.environ.get("MODELC_TOOLS_DIR",
                           os.path.expanduser("~/.cache/modelc-tools"))
nvdisasm_candidates = [shutil.which("nvdisasm"), "/usr/local/cuda/bin/nvdisasm",
                       os.path.join(tools_dir, "nvidia", "cu13", "bin", "nvdisasm")]
nvdisasm = next((c for c in nvdisasm_candidates if c and os.access(c, os.X_OK)), None)
if nvdisasm:
    config.available_features.add("nvdisasm")
    config.substitutions.append(("%nvdisasm", nvdisasm))
elif not getattr(lit_config, "modelc_nvdisasm_note_printed", False):
    lit_config.modelc_nvdisasm_note_printed = True
    lit_config.note("SASS tests (REQUIRES: nvdisasm): skipped: no nvdisasm "
                    "(setup.sh installs it from PyPI: nvidia-cuda-nvdisasm)")
# %fake_cuda: the fake libcuda and libcublasLt of the runtime's unit tests
# (test/unit/runtime/fake), built with them: a program's GPU path without a
# GPU (every launch's arguments and block against its kernel's PTX).
fake_cuda = os.path.join(config.modelc_obj_root, "test", "unit",
                         "libmodelc_fake_cuda.so")
if os.path.exists(fake_cuda):
    config.available_features.add("fake-cuda")
    config.substitutions.append(("%fake_cuda", fake_cuda))
# %ptxas: the ptxas that modelc would find (PATH, then /usr/local/cuda/bin).
ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
if os.path.exists(ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
