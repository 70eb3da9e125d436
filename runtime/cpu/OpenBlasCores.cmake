# The CPU generations whose OpenBLAS kernels programs leave out, each with
# the kept generation whose kernels it runs instead (docs/codegen/cpu.md,
# "Executable"). Debian's static OpenBLAS carries kernels for 22 x86-64
# generations (DYNAMIC_ARCH), 23 MB of a 31 MB program; OpenBLAS picks one
# set when the program starts. These sets are for CPUs of 2003 to 2015;
# each maps to a set whose instructions it has: the SSE3 Intel and AMD
# ones and the low-power ones to Prescott's (OpenBLAS's own fallback for a
# CPU it does not know), AMD's AVX family 15h to Sandy Bridge's. Kept:
# Opteron (SSE2 only), Prescott, Sandy Bridge, Haswell, Zen, SkylakeX and
# Cooper Lake. Read by runtime/CMakeLists.txt (which removes the left-out
# kernels from the archive programs link) and codegen/CMakeLists.txt (whose
# link points each left-out generation at its replacement).
set(MODELC_OPENBLAS_CORE_ALIASES
  CORE2=PRESCOTT PENRYN=PRESCOTT DUNNINGTON=PRESCOTT NEHALEM=PRESCOTT
  ATOM=PRESCOTT NANO=PRESCOTT
  OPTERON_SSE3=PRESCOTT BARCELONA=PRESCOTT BOBCAT=PRESCOTT
  BULLDOZER=SANDYBRIDGE PILEDRIVER=SANDYBRIDGE STEAMROLLER=SANDYBRIDGE
  EXCAVATOR=SANDYBRIDGE)
