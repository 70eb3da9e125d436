# lit configuration of the sanitizer build's tests: the fuzz targets, each
# for a bounded time over its seed corpus, and programs that modelc (of the
# main build) links against the sanitized runtime.
import os
import shutil
import lit.formats

config.name = "modelc-sanitized"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".test"]
config.excludes = ["fuzz", "unit", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.modelc_sanitized_obj_root, "test")

obj = config.modelc_sanitized_obj_root
main_bin = os.path.join(config.modelc_main_obj_root, "bin")
# `c++` first: modelc -o links with clang and the sanitizers' runtimes.
config.environment["PATH"] = os.pathsep.join(
    [os.path.join(obj, "link"), main_bin, "/usr/lib/llvm-19/bin",
     config.environment.get("PATH", "")])
config.environment["ASAN_OPTIONS"] = "detect_leaks=1"
config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
if os.path.exists(os.path.join(main_bin, "modelc")):
    config.available_features.add("modelc")

# %fuzz NAME: the target run for MODELC_FUZZ_SECONDS (30) over a scratch
# corpus and its seeds; libFuzzer exits non-zero on any finding.
seconds = os.environ.get("MODELC_FUZZ_SECONDS", "30")
corpus = os.path.join(config.modelc_src_root, "test", "sanitized", "fuzz",
                      "corpus")
config.substitutions.append(("%fuzz_bin", os.path.join(obj, "fuzz")))
config.substitutions.append(("%corpus", corpus))
config.substitutions.append(("%fuzz_seconds", seconds))
config.substitutions.append(("%sanitized_lib", os.path.join(obj, "lib")))
config.substitutions.append(("%examples",
                             os.path.join(config.modelc_src_root, "examples")))
config.substitutions.append(("%modelc_src", config.modelc_src_root))

def find_python():
    """A Python 3 with NumPy (the data generators need it), as the main
    suite finds it."""
    import subprocess
    for candidate in [config.python_executable, "/usr/bin/python3", "python3"]:
        if candidate and shutil.which(candidate) and subprocess.run(
                [candidate, "-c", "import numpy"], stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL).returncode == 0:
            config.available_features.add("numpy")
            return candidate
    return "python3"

config.substitutions.append(("%python", find_python()))
