# lit runs the GoogleTest executables (*-unittests) so that one lit run counts
# every test, unit tests included.
import os
import lit.formats

config.name = "modelc-unit"
config.test_format = lit.formats.GoogleTest(".", "-unittests")
config.test_source_root = os.path.join(config.modelc_obj_root, "test", "unit")
config.test_exec_root = config.test_source_root
