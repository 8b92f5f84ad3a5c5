"""deploy/: the DaemonSet and the Spark executor example validate against
the Kubernetes schemas (kubernetes-validate, offline, strict), and say what
the agent needs: privileged, host PID namespace, /sys and the BPF and
tracing mounts, host paths for outputs and the helper, the continuous mode,
requests and limits; the executor side loads the helper from where the
DaemonSet installs it."""
import os
import subprocess

import pytest
import yaml

from testlib import ROOT

DEPLOY = os.path.join(ROOT, "deploy")
MANIFESTS = ["sparkprof-daemonset.yaml", "spark-executor-pod-template.yaml"]


@pytest.mark.parametrize("version", ["1.28.0", "1.37.0"])
def test_manifests_validate(version):
    paths = [os.path.join(DEPLOY, m) for m in MANIFESTS]
    proc = subprocess.run(["kubernetes-validate", "--strict", "-k", version, *paths],
                          capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    # Every resource was checked: the namespace, the DaemonSet, the pod.
    assert out.count("passed for resource") == 3, out


def test_validator_rejects_a_broken_daemonset(tmp_path):
    """The check above can fail: a misspelt field is refused."""
    with open(os.path.join(DEPLOY, "sparkprof-daemonset.yaml")) as f:
        docs = list(yaml.safe_load_all(f))
    ds = next(d for d in docs if d["kind"] == "DaemonSet")
    ds["spec"]["template"]["spec"]["hostPid"] = True
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(ds))
    proc = subprocess.run(["kubernetes-validate", "--strict", str(bad)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode != 0, proc.stdout


def daemonset():
    with open(os.path.join(DEPLOY, "sparkprof-daemonset.yaml")) as f:
        return next(d for d in yaml.safe_load_all(f) if d and d["kind"] == "DaemonSet")


def test_daemonset_has_what_the_agent_needs():
    spec = daemonset()["spec"]["template"]["spec"]
    assert spec["hostPID"] is True
    agent = next(c for c in spec["containers"] if c["name"] == "sparkprof")
    assert agent["securityContext"]["privileged"] is True
    args = agent["args"]
    assert args[0] == "record" and "--rotate" in args and "--keep" in args
    # Profiles go on to the Collector too (OTLP/HTTP).
    env = {e["name"]: e.get("value") for e in agent["env"]}
    assert args[args.index("--otlp") + 1] == "$(OTLP_ENDPOINT)"
    assert env["OTLP_ENDPOINT"].startswith("http") and env["OTLP_ENDPOINT"].endswith(":4318")
    host_paths = {v["name"]: v["hostPath"]["path"] for v in spec["volumes"] if "hostPath" in v}
    mounts = {m["name"]: m["mountPath"] for m in agent["volumeMounts"]}
    for path in ("/sys", "/sys/fs/bpf", "/sys/kernel/debug", "/sys/kernel/tracing"):
        name = next(n for n, p in host_paths.items() if p == path)
        assert mounts[name] == path, (name, mounts)
    out_dir = args[args.index("-o") + 1]
    assert out_dir.startswith(mounts["outputs"] + "/"), (out_dir, mounts)
    assert host_paths["outputs"] == "/var/lib/sparkprof"
    # Host debug symbols through SPARKPROF_HOST_ROOT.
    env = {e["name"]: e.get("value") for e in agent["env"]}
    assert mounts["host-debug-symbols"] == env["SPARKPROF_HOST_ROOT"] + "/usr/lib/debug"
    assert host_paths["host-debug-symbols"] == "/usr/lib/debug"
    # The helper: installed by the init container into the helper host path.
    init = spec["initContainers"][0]
    assert init["args"][0] == "install-helper"
    init_mounts = {m["name"]: m["mountPath"] for m in init["volumeMounts"]}
    assert init["args"][1] == init_mounts["helper"]
    for c in (agent, init):
        for kind in ("requests", "limits"):
            assert {"cpu", "memory"} <= set(c["resources"][kind]), c["name"]
    assert any(t.get("operator") == "Exists" for t in spec["tolerations"])
    assert spec["nodeSelector"]


def test_executor_example_loads_the_installed_helper():
    spec = daemonset()["spec"]["template"]["spec"]
    helper_host = next(v["hostPath"]["path"] for v in spec["volumes"] if v["name"] == "helper")
    agentpath = f"-agentpath:{helper_host}/libsparkprof-agent.so"

    with open(os.path.join(DEPLOY, "spark-executor-pod-template.yaml")) as f:
        pod = yaml.safe_load(f)
    vol = pod["spec"]["volumes"][0]
    mount = pod["spec"]["containers"][0]["volumeMounts"][0]
    assert vol["hostPath"]["path"] == helper_host and mount["name"] == vol["name"]
    assert mount["mountPath"] == helper_host  # the same path inside the executor

    conf = {}
    with open(os.path.join(DEPLOY, "spark-defaults.conf")) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                key, _, value = line.rstrip("\n").partition("=")
                conf[key] = value
    assert agentpath in conf["spark.executor.extraJavaOptions"].split()
    assert "-XX:+PreserveFramePointer" in conf["spark.executor.extraJavaOptions"].split()
    prefix = "spark.kubernetes.executor.volumes.hostPath.sparkprof."
    assert conf[prefix + "options.path"] == helper_host
    assert conf[prefix + "mount.path"] == helper_host
