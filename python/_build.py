# SPDX-License-Identifier: LGPL-2.1-or-later
"""PEP 517 backend: setuptools' own, except that a wheel is built without
the "wheel" package when it is missing (fresh venvs have setuptools and
pip only, and there is no package index to fetch it from).

The fallback runs "setup.py build" and zips the result with the metadata
setuptools' egg_info writes (PEP 427 layout: *.dist-info with METADATA,
WHEEL and RECORD).
"""
import base64
import hashlib
import os
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

from setuptools import build_meta as _st

build_sdist = _st.build_sdist
get_requires_for_build_sdist = _st.get_requires_for_build_sdist

try:
    import wheel  # noqa: F401
    _HAVE_WHEEL = True
except ImportError:
    _HAVE_WHEEL = False

if _HAVE_WHEEL:
    get_requires_for_build_wheel = _st.get_requires_for_build_wheel
    prepare_metadata_for_build_wheel = _st.prepare_metadata_for_build_wheel
    build_wheel = _st.build_wheel
else:
    def get_requires_for_build_wheel(config_settings=None):
        return []

    def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
        return _build_wheel(wheel_directory)


def _tag():
    impl = "cp%d%d" % sys.version_info[:2]
    abi = impl + getattr(sys, "abiflags", "")
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return "%s-%s-%s" % (impl, abi, plat)


def _setup(*args):
    subprocess.check_call([sys.executable, "setup.py", "-q"] + list(args))


def _metadata(egg_dir):
    with open(os.path.join(egg_dir, "PKG-INFO")) as f:
        text = f.read()
    head, sep, body = text.partition("\n\n")
    fields = dict(line.split(": ", 1) for line in head.splitlines() if ": " in line)
    return fields["Name"], fields["Version"], text


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "%s,sha256=%s,%d" % (arcname, digest.decode(), len(data))


def _build_wheel(wheel_directory):
    with tempfile.TemporaryDirectory() as tmp:
        lib, egg = os.path.join(tmp, "lib"), os.path.join(tmp, "egg")
        os.mkdir(egg)
        _setup("build", "--build-lib", lib, "--build-temp", os.path.join(tmp, "t"))
        _setup("egg_info", "--egg-base", egg)
        name, version, pkginfo = _metadata(os.path.join(egg, os.listdir(egg)[0]))
        tag = _tag()
        dist = "%s-%s.dist-info" % (name, version)
        files = []
        for root, _dirs, names in os.walk(lib):
            for n in sorted(names):
                path = os.path.join(root, n)
                with open(path, "rb") as f:
                    files.append((os.path.relpath(path, lib), f.read()))
        files.append((dist + "/METADATA", pkginfo.encode()))
        files.append((dist + "/WHEEL", (
            "Wheel-Version: 1.0\nGenerator: inofd _build.py\n"
            "Root-Is-Purelib: false\nTag: %s\n" % tag).encode()))
        files.append((dist + "/top_level.txt", b"inofd\n"))
        record = [_record_line(a, d) for a, d in files] + [dist + "/RECORD,,"]
        files.append((dist + "/RECORD", ("\n".join(record) + "\n").encode()))
        whl = "%s-%s-%s.whl" % (name, version, tag)
        with zipfile.ZipFile(os.path.join(wheel_directory, whl), "w",
                             zipfile.ZIP_DEFLATED) as z:
            for arcname, data in files:
                z.writestr(arcname, data)
        return whl
