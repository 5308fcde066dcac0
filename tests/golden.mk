# tests/golden.mk: the golden-case suite (tests/golden/*, made by the
# generators in tools/golden/), run by tests/golden.sh with the shared runner.
TESTS += tests/golden.sh
EXTRA_DIST += tests/golden.sh tests/golden tools/golden/gcase.py tools/golden/gen_f8.py \
  tools/golden/gen_float.py tools/golden/gen_fused.py tools/golden/gen_int.py tools/golden/gen_shlo.py \
  tools/golden/gen_sizes.py tools/golden/gen_special.py tools/golden/gen_struct.py
