# python/: the Python package hlorun (pure Python over the installed
# libhlorun through cffi's ABI mode: nothing to compile). make install puts
# it in Python's site directory and records where the library went
# (_libpath.txt), so `import hlorun` finds this libhlorun without
# LD_LIBRARY_PATH.
if HAVE_PYTHON
hlorunpydir = $(pythondir)/hlorun
hlorunpy_PYTHON = python/hlorun/__init__.py python/hlorun/_lib.py python/hlorun/_errors.py \
	python/hlorun/_dtypes.py python/hlorun/_values.py python/hlorun/_handlers.py \
	python/hlorun/_module.py python/hlorun/_compare.py python/hlorun/testing.py \
	python/hlorun/_reduce.py python/hlorun/_diverge.py python/hlorun/_keep.py \
	python/hlorun/_determinism.py

install-data-hook: install-python-libpath
install-python-libpath:
	echo '$(libdir)/libhlorun.so.0' > '$(DESTDIR)$(hlorunpydir)/_libpath.txt'
uninstall-hook: uninstall-python-libpath
uninstall-python-libpath:
	rm -f '$(DESTDIR)$(hlorunpydir)/_libpath.txt'
endif
.PHONY: install-python-libpath uninstall-python-libpath

# pytest over the package (tests/python/): skipped (exit 77) with the reason
# when cffi, numpy or pytest cannot be imported.
TESTS += tests/python/run-pytest.sh
dist_noinst_SCRIPTS += tests/python/run-pytest.sh
EXTRA_DIST += tests/python/conftest.py tests/python/test_dtypes.py tests/python/test_run.py \
	tests/python/test_reduce.py tests/python/test_diverge.py tests/python/test_keep.py \
	tests/python/test_handlers.py tests/python/test_callbacks.py tests/python/test_golden.py tests/python/test_cli_equal.py \
	tests/python/test_stablehlo.py tests/python/test_determinism.py
