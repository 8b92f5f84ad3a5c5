#!/usr/bin/env bash
# Installs everything sparkprof needs to build and to run its test suite.
# Idempotent: packages already present are not fetched again. Needs root.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: run as root (it installs Debian packages)" >&2
	exit 1
fi

# Build: BPF compiler, libbpf, skeleton generator, libelf, zlib; libcurl and
# protobuf-c (with protoc-c, which generates the OTLP messages' C code);
# openssl makes the OTLP TLS test's certificate.
# Tests and benchmarks: a JDK, linux-perf for comparisons, python3 + pytest.
apt_packages="clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev pkg-config make gcc
	libc6-dev linux-perf python3 python3-pip procps util-linux binutils passwd
	libcurl4-openssl-dev protobuf-c-compiler libprotobuf-c-dev openssl"
# The HTML pages' tests load them in headless Chromium, driven by Playwright
# (tests/integration/browser.py; installed below, with no browser of its own).
apt_packages="$apt_packages chromium"
# Spark's event logs (zstd, lz4 and snappy as Spark frames them; JSON lines)
# and its REST API (HTTP): user/spark/event_log*.c and spark_rest.c.
apt_packages="$apt_packages libzstd-dev liblz4-dev libsnappy-dev libjson-c-dev libcurl4-openssl-dev"

# Installs the Debian packages named that are not installed yet.
install_missing() {
	local missing="" p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		echo "install-deps: installing$missing"
		apt-get update -qq
		apt-get install -y -qq $missing >/dev/null
	fi
}
install_missing $apt_packages

if ! command -v javac >/dev/null 2>&1; then
	echo "install-deps: installing a JDK"
	apt-get update -qq
	apt-get install -y -qq openjdk-17-jdk-headless >/dev/null
fi

# `go tool pprof` reads the pprof files in tests/integration/test_pprof.py.
if ! command -v go >/dev/null 2>&1 && [ ! -x /usr/local/go/bin/go ]; then
	echo "install-deps: installing go (for go tool pprof)"
	apt-get update -qq
	apt-get install -y -qq golang-go >/dev/null
fi

python3 -m pytest --version >/dev/null 2>&1 || python3 -m pip install -q pytest

# An OpenTelemetry Collector v0.165.0 for the OTLP export tests
# (tests/integration/test_otlp.py): the OTLP receiver and contrib's file
# exporter, built from tools/otelcol with modules from the Go module proxy.
# `go mod tidy` fails on a test-only module of the file exporter, so go.mod
# and go.sum are kept as `go get` left them and the build is -mod=readonly.
# Rebuilt only when tools/otelcol changes.
otelcol_dir=/var/cache/sparkprof-deps/otelcol-0.165.0
otelcol_src="$(cd "$(dirname "$0")/otelcol" && pwd)"
otelcol_key=$(cat "$otelcol_src/main.go" "$otelcol_src/go.mod" "$otelcol_src/go.sum" | sha256sum | cut -c1-16)
if [ ! -x "$otelcol_dir/otelcol" ] || [ "$(cat "$otelcol_dir/source-key" 2>/dev/null)" != "$otelcol_key" ]; then
	go_bin=$(command -v go || echo /usr/local/go/bin/go)
	echo "install-deps: building the OpenTelemetry Collector 0.165.0 (a few minutes)"
	mkdir -p "$otelcol_dir"
	if ! (cd "$otelcol_src" && "$go_bin" build -mod=readonly -trimpath -o "$otelcol_dir/otelcol.tmp" .); then
		echo "install-deps: building tools/otelcol failed (it needs go $(sed -n 's/^go //p' "$otelcol_src/go.mod") or later; $("$go_bin" version))" >&2
		exit 1
	fi
	mv "$otelcol_dir/otelcol.tmp" "$otelcol_dir/otelcol"
	echo "$otelcol_key" >"$otelcol_dir/source-key"
fi

# Playwright drives Debian's chromium for the HTML pages' tests and
# bench/flame_page.py. Pinned; its own browsers are never downloaded
# (`playwright install` is not run): tests/integration/browser.py launches
# /usr/bin/chromium.
playwright_version=1.65.2
if [ "$(python3 -c 'import importlib.metadata as m; print(m.version("playwright"))' 2>/dev/null)" != "$playwright_version" ]; then
	echo "install-deps: installing playwright $playwright_version"
	python3 -m pip install -q "playwright==$playwright_version"
fi

# Maven fetches the JFR readers the tests compare against (Maven Central).
need_maven() {
	if ! command -v mvn >/dev/null 2>&1; then
		echo "install-deps: installing maven"
		apt-get update -qq
		apt-get install -y -qq maven >/dev/null
	fi
}

# async-profiler's JFR converter (tests of the JFR writer) from Maven Central,
# kept at a stable path that tests/conftest.py looks up.
jfrconv_version=4.2
jfrconv_jar=/var/cache/sparkprof-deps/jfr-converter-$jfrconv_version.jar
if [ ! -s "$jfrconv_jar" ]; then
	need_maven
	echo "install-deps: fetching tools.profiler:jfr-converter:$jfrconv_version"
	mvn -q -B dependency:get -Dtransitive=false \
		-Dartifact=tools.profiler:jfr-converter:$jfrconv_version
	mkdir -p /var/cache/sparkprof-deps
	cp "$HOME/.m2/repository/tools/profiler/jfr-converter/$jfrconv_version/jfr-converter-$jfrconv_version.jar" \
		"$jfrconv_jar.tmp"
	mv "$jfrconv_jar.tmp" "$jfrconv_jar"
fi

# async-profiler itself (bench/node_cost.py runs it beside sparkprof on a Spark
# job): the Maven Central jar carries libasyncProfiler.so for each platform;
# the linux-x64 one is kept at a stable path.
asprof_version=4.2
asprof_so=/var/cache/sparkprof-deps/async-profiler-$asprof_version/libasyncProfiler.so
if [ ! -s "$asprof_so" ] && [ "$(uname -m)" = x86_64 ]; then
	need_maven
	echo "install-deps: fetching tools.profiler:async-profiler:$asprof_version"
	mvn -q -B dependency:get -Dtransitive=false \
		-Dartifact=tools.profiler:async-profiler:$asprof_version
	mkdir -p "$(dirname "$asprof_so")"
	python3 -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read("linux-x64/libasyncProfiler.so"))' \
		"$HOME/.m2/repository/tools/profiler/async-profiler/$asprof_version/async-profiler-$asprof_version.jar" \
		>"$asprof_so.tmp"
	mv "$asprof_so.tmp" "$asprof_so"
fi

# pyspark (tests/integration/spark_cluster.py: a real local-cluster Spark
# application on JDK 17).  Pinned; reinstalled only when another version is there.
pyspark_version=3.5.3
if [ "$(python3 -c 'import pyspark; print(pyspark.__version__)' 2>/dev/null)" != "$pyspark_version" ]; then
	echo "install-deps: installing pyspark $pyspark_version"
	python3 -m pip install -q "pyspark==$pyspark_version"
fi

# PySpark 4 with its Python UDF dependencies and py-spy, in one venv per CPython
# (tests/integration/test_pyspark_python.py: a local-cluster job's Python
# workers, whose frames sparkprof walks, compared with py-spy's): from pyenv's
# 3.11.7 and 3.12.1, kept under /var/cache/sparkprof-deps/pyspark4-pyX.Y.
# Pinned; a venv is rebuilt only when its pins differ from these.
pyspark4_pins="pyspark==4.0.1 pandas==2.2.3 pyarrow==20.0.0 numpy==2.2.6 py-spy==0.4.1"
pyenv_root=$(pyenv root 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}")
for pyspark4_python in 3.11.7 3.12.1; do
	base_python="$pyenv_root/versions/$pyspark4_python/bin/python3"
	venv=/var/cache/sparkprof-deps/pyspark4-py${pyspark4_python%.*}
	if [ ! -x "$base_python" ]; then
		echo "install-deps: no pyenv CPython $pyspark4_python ($base_python): $venv skipped" >&2
		continue
	fi
	if [ "$(cat "$venv/.sparkprof-pins" 2>/dev/null)" != "$pyspark4_pins" ]; then
		echo "install-deps: building $venv ($pyspark4_pins)"
		# built in place (a venv's scripts name its folder); the pins file,
		# written last, says it is complete
		rm -rf "$venv"
		"$base_python" -m venv "$venv"
		"$venv/bin/python3" -m pip install -q $pyspark4_pins
		echo "$pyspark4_pins" >"$venv/.sparkprof-pins"
	fi
done

# JDK Mission Control's parser (tests that JMC loads the JFR writer's files,
# plain and gzip), with its dependencies, from Maven Central.
jmc_version=9.1.0
jmc_dir=/var/cache/sparkprof-deps/jmc-$jmc_version
if [ ! -s "$jmc_dir/flightrecorder.jar" ]; then
	need_maven
	echo "install-deps: fetching org.openjdk.jmc:flightrecorder:$jmc_version"
	mvn -q -B dependency:get -Dartifact=org.openjdk.jmc:flightrecorder:$jmc_version
	m2="$HOME/.m2/repository"
	mkdir -p "$jmc_dir.tmp"
	cp "$m2/org/openjdk/jmc/common/$jmc_version/common-$jmc_version.jar" \
		"$m2"/org/owasp/encoder/encoder/*/encoder-*.jar \
		"$m2"/org/lz4/lz4-java/*/lz4-java-*.jar "$jmc_dir.tmp/"
	cp "$m2/org/openjdk/jmc/flightrecorder/$jmc_version/flightrecorder-$jmc_version.jar" \
		"$jmc_dir.tmp/flightrecorder.jar"
	rm -rf "$jmc_dir"
	mv "$jmc_dir.tmp" "$jmc_dir"
fi

# Containers (tests/integration/test_container.py, `make image`): podman with
# the runc runtime (crun refuses this host's hybrid cgroups), no default
# ulimits (podman's default RLIMIT_NOFILE fails here), debootstrap for the
# base image, and kubernetes-validate for the deploy/ manifests.
install_missing podman runc debootstrap
containers_conf=/etc/containers/containers.conf
if ! grep -qs '^# sparkprof: runc, no default ulimits' "$containers_conf"; then
	echo "install-deps: configuring podman ($containers_conf)"
	mkdir -p /etc/containers
	[ -e "$containers_conf" ] && cp "$containers_conf" "$containers_conf.sparkprof-orig"
	cat > "$containers_conf" <<'CONF'
# sparkprof: runc, no default ulimits (written by tools/install-deps.sh)
[containers]
default_ulimits = []

[engine]
runtime = "runc"
CONF
fi
# The kernel matrix (tests/integration/test_kernels.py): Debian's 5.10, 6.1
# and 6.12 kernels, unpacked under /var/cache/sparkprof-deps/kernels (never
# installed), booted by virtme-ng in QEMU; busybox makes its initramfs and
# depmod the kernels' modules.dep.
install_missing qemu-system-x86 kmod busybox-static
vng_version=1.42
if [ "$(python3 -c 'import importlib.metadata as m; print(m.version("virtme-ng"))' 2>/dev/null)" != "$vng_version" ]; then
	echo "install-deps: installing virtme-ng $vng_version"
	python3 -m pip install -q "virtme-ng==$vng_version"
fi
"$(dirname "$0")/fetch-kernels.sh"

kv_version=1.37.0
if [ "$(python3 -c 'import kubernetes_validate; print(kubernetes_validate.__version__)' 2>/dev/null)" != "$kv_version" ]; then
	echo "install-deps: installing kubernetes-validate $kv_version"
	python3 -m pip install -q "kubernetes-validate==$kv_version"
fi

# The base image of deploy/Containerfile (FROM sparkprof-base:bookworm): base
# images cannot be pulled here, so a Debian bookworm rootfs is built with
# debootstrap from the mirror apt already uses, and imported under that name.
base_image=localhost/sparkprof-base:bookworm
if ! podman image exists "$base_image"; then
	mirror=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)
	[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
	[ -n "$mirror" ] || mirror=http://deb.debian.org/debian
	echo "install-deps: building $base_image with debootstrap from $mirror"
	rootfs=$(mktemp -d /var/tmp/sparkprof-rootfs.XXXXXX)
	debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >/dev/null
	tar -C "$rootfs" -c . | podman import --change 'CMD ["/bin/bash"]' - "$base_image" >/dev/null
	rm -rf "$rootfs"
fi
