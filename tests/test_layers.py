"""The tree is the architecture: each folder of user/ includes only itself and
the folders below it in the data path, and no module includes itself back
(tools/check_layers.py). The checker itself is tested on a planted tie."""
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECK = os.path.join(ROOT, "tools", "check_layers.py")


def run_check(root):
    return subprocess.run([sys.executable, CHECK, root], capture_output=True, text=True)


def test_user_includes_follow_the_data_path():
    proc = run_check(ROOT)
    assert proc.returncode == 0 and proc.stdout == "", proc.stdout


def test_jvmti_helper_has_no_include_cycle():
    proc = subprocess.run([sys.executable, CHECK, "--cycles-only", os.path.join(ROOT, "tools", "jvmti")],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout == "", proc.stdout


def test_checker_finds_an_upward_include_and_a_cycle(tmp_path):
    user = tmp_path / "user"
    for folder in ("proc", "spark"):
        (user / folder).mkdir(parents=True)
    (user / "proc" / "a.h").write_text('#include "spark/b.h"\n')
    (user / "proc" / "a.c").write_text('#include "proc/a.h"\n')
    (user / "spark" / "b.h").write_text('#include "proc/a.h"\n')
    proc = run_check(str(tmp_path))
    assert proc.returncode == 1
    assert "user/proc/a.h: includes spark/b.h, a layer above it" in proc.stdout
    assert "include cycle: proc/a -> spark/b -> proc/a" in proc.stdout
