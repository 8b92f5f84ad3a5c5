"""`sparkprof install-helper DIR` on the host: the helper's exact bytes,
mode 0644 whatever the umask, replaced atomically (DIR made if missing),
one-line errors."""
import os
import stat
import subprocess

from testlib import SPARKPROF


def install(*args, umask=0o077):
    return subprocess.run([SPARKPROF, "install-helper", *map(str, args)], capture_output=True,
                          text=True, timeout=30, preexec_fn=lambda: os.umask(umask))


def test_copies_the_helper_readable_by_executors(tmp_path, agent_path):
    proc = install(tmp_path)
    assert proc.returncode == 0, proc.stderr
    dest = tmp_path / "libsparkprof-agent.so"
    assert dest.read_bytes() == open(agent_path, "rb").read()
    assert stat.S_IMODE(dest.stat().st_mode) == 0o644
    assert f"-agentpath:{dest}" in proc.stdout
    # Again over the first copy: replaced, no temporary file left.
    assert install(tmp_path).returncode == 0
    assert sorted(os.listdir(tmp_path)) == ["libsparkprof-agent.so"]


def test_a_folder_that_cannot_be_made_is_one_line_naming_it(tmp_path):
    (tmp_path / "a-file").write_text("")
    target = tmp_path / "a-file" / "helper"
    proc = install(target)
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and str(target) in lines[0] and "Not a directory" in lines[0], \
        proc.stderr
