"""Prints where the bnorm package goes under PREFIX, relative to it: the
directory this interpreter itself would import installed packages from.

    python3 install_dir.py PREFIX

- PREFIX is the user base (~/.local): the user site (lib/python3.11/site-packages).
- PREFIX is the venv this interpreter runs in: the venv's site-packages.
- Debian's interpreter (it has the deb_system scheme): /usr gives
  lib/python3/dist-packages (Debian's packages); any other prefix gives
  lib/python3.11/dist-packages, which is what Debian's Python reads under
  /usr/local (another prefix then needs PYTHONPATH).
- Any other interpreter: its posix_prefix scheme with the prefix substituted
  (lib/python3.11/site-packages; under the interpreter's own prefix, a venv's
  for one, that is on its path).
"""
import os
import site
import sys
import sysconfig


def relative_dir(prefix):
    prefix = os.path.normpath(prefix)
    vars_ = {"base": prefix, "platbase": prefix, "installed_base": prefix, "installed_platbase": prefix}
    schemes = sysconfig.get_scheme_names()
    if site.USER_BASE and os.path.normpath(site.USER_BASE) == prefix and "posix_user" in schemes:
        path = sysconfig.get_path("platlib", "posix_user", vars={"userbase": prefix})
    elif sys.prefix != sys.base_prefix and os.path.normpath(sys.prefix) == prefix:
        path = sysconfig.get_path("platlib")
    elif "deb_system" in schemes:
        if prefix == "/usr":
            path = sysconfig.get_path("platlib", "deb_system", vars=vars_)
        else:
            path = os.path.join(prefix, "lib", f"python{sys.version_info[0]}.{sys.version_info[1]}", "dist-packages")
    else:
        path = sysconfig.get_path("platlib", "posix_prefix", vars=vars_)
    return os.path.relpath(path, prefix)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: install_dir.py PREFIX")
    print(relative_dir(sys.argv[1]))
