# lit runs the sanitized runtime-unittests as test/unit/lit.cfg.py runs the
# main build's: one lit test per GoogleTest case.
import os
import lit.formats

config.name = "modelc-sanitized-unit"
config.test_format = lit.formats.GoogleTest(".", "-unittests")
config.test_source_root = os.path.join(config.modelc_sanitized_obj_root, "unit")
config.test_exec_root = config.test_source_root
# Any report ends the test with a failure; leaks are reported too.
config.environment["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0"
config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
