# SPDX-License-Identifier: LGPL-2.1-or-later
"""Build of the inofd Python package (pip install --no-build-isolation .).

The extension inofd._inofd is _inofd.c compiled together with libinofd's
own sources, so no installed libinofd is needed.  In a clone they are
../libinotify; an sdist carries a copy in libinofd/ (made by the sdist
command below), which is then used.  libinofd's symbols are hidden: the
module exports only PyInit__inofd.
"""
import glob
import os
import re
import shutil

from setuptools import Extension, setup
from setuptools.command.sdist import sdist

HERE = os.path.dirname(os.path.abspath(__file__))
COPY = "libinofd"                       # the sdist's copy of ../libinotify
CLONE = os.path.join("..", "libinotify")
COPIED = ["Makefile", "include", "src"]


def libdir():
    """libinofd's sources relative to this file: the sdist's copy, else the clone's."""
    for d in (COPY, CLONE):
        if os.path.isfile(os.path.join(HERE, d, "include", "inofd.h")):
            return d
    raise SystemExit("inofd: libinofd's sources are in neither %s/ nor %s/ "
                     "(build from a clone or from an sdist)" % (COPY, CLONE))


def lib_version(lib):
    with open(os.path.join(HERE, lib, "Makefile")) as f:
        text = f.read()
    parts = [re.search(r"^VERSION_%s\s*:=\s*(\d+)" % p, text, re.M).group(1)
             for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


class sdist_with_lib(sdist):
    """sdist that carries libinofd's sources (from ../libinotify) in libinofd/."""

    def make_release_tree(self, base_dir, files):
        # the extension's ../libinotify sources are not copied as they are
        # named (that would land outside base_dir) but as libinofd/
        files = [f for f in files if not f.startswith(os.pardir)]
        sdist.make_release_tree(self, base_dir, files)
        lib = libdir()
        for name in COPIED:
            src = os.path.join(HERE, lib, name)
            dst = os.path.join(base_dir, COPY, name)
            if os.path.isdir(src):
                shutil.copytree(src, dst, ignore=shutil.ignore_patterns(
                    "*.o", "*.a", "*.so*", "*.pc"))
            else:
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copy2(src, dst)


LIB = libdir()
VERSION = lib_version(LIB)
with open(os.path.join(HERE, "README")) as f:
    README = f.read()

ext = Extension(
    "inofd._inofd",
    sources=["_inofd.c"] + sorted(glob.glob(os.path.join(LIB, "src", "*.c"))),
    include_dirs=[os.path.join(LIB, "include"), os.path.join(LIB, "src"),
                  os.path.join(LIB, "src", "uapi")],
    # INOFD_API empty + -fvisibility=hidden: no inofd_* symbol is exported.
    define_macros=[("INOFD_VERSION", '"%s"' % VERSION), ("INOFD_API", "")],
    extra_compile_args=["-std=gnu11", "-fvisibility=hidden", "-fno-strict-aliasing"],
)

setup(
    name="inofd",
    version=VERSION,
    description="inotify watches by file descriptor (libinofd), "
                "a watchfiles-compatible API and a watchdog observer",
    long_description=README,
    long_description_content_type="text/plain",
    license="LGPL-2.1-or-later",
    python_requires=">=3.8",
    packages=["inofd"],
    package_data={"inofd": ["py.typed", "*.pyi"]},
    ext_modules=[ext],
    cmdclass={"sdist": sdist_with_lib},
    zip_safe=False,
    classifiers=[
        "Operating System :: POSIX :: Linux",
        "Programming Language :: C",
        "Programming Language :: Python :: 3",
        "Typing :: Typed",
    ],
)
