# sparkprof build.
#
# Conventions (see docs/hacking.md):
#   user/**/*.c       -> the sparkprof binary (user/main.c holds main()); every
#                        other object also goes into build/libsparkprof.a so
#                        unit tests and fuzzers link the same code. Includes
#                        are written relative to user/ ("proc/proc_status.h").
#   bpf/*.bpf.c       -> build/NAME.bpf.o and build/NAME.skel.h
#   tools/jvmti/*.c   -> build/libsparkprof-agent.so (the JVMTI helper)
#   tests/unit/test_*.c -> build/tests/test_* (TAP output, run by pytest)
#   tests/fuzz/fuzz_*.c -> build/fuzz/fuzz_* (libFuzzer, clang)
#   proto/**/*.proto  -> build/proto/**/*.pb-c.{c,h} (protoc-c), linked like
#                        user/ objects; included as "opentelemetry/proto/..."
# New files in those folders are picked up without editing this file.

CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
LLVM_STRIP ?= llvm-strip
PYTHON   ?= python3
BUILD    := build

ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra -Werror=implicit-function-declaration \
            -fno-omit-frame-pointer -D_GNU_SOURCE
CPPFLAGS += -Iinclude -Iuser -I$(BUILD) -I$(BUILD)/proto
PROTOC_C ?= protoc-c
LDLIBS   += -lbpf -lelf -lz -lcurl -lprotobuf-c -lpthread -lm
# Spark's event logs and REST API (user/spark/event_log*, spark_rest): its
# codecs, JSON and HTTP.
LDLIBS   += -lzstd -llz4 -lsnappy -ljson-c -lcurl

BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall \
              -Ivmlinux -Iinclude

USER_SRCS  := $(wildcard user/*.c user/*/*.c user/*/*/*.c)
USER_OBJS  := $(patsubst user/%.c,$(BUILD)/user/%.o,$(USER_SRCS))
# protobuf messages (OTLP profiles, pprof): C code generated from the
# vendored .proto files (proto/README.md says from where); nothing generated
# is committed.
PROTO_SRCS := $(shell find proto -name "*.proto" 2>/dev/null | sort)
PROTO_GEN_C := $(patsubst proto/%.proto,$(BUILD)/proto/%.pb-c.c,$(PROTO_SRCS))
PROTO_GEN_H := $(PROTO_GEN_C:.c=.h)
PROTO_OBJS := $(PROTO_GEN_C:.c=.o)
LIB_OBJS   := $(filter-out $(BUILD)/user/main.o,$(USER_OBJS)) $(PROTO_OBJS)
BPF_SRCS   := $(wildcard bpf/*.bpf.c)
BPF_OBJS   := $(patsubst bpf/%.bpf.c,$(BUILD)/%.bpf.o,$(BPF_SRCS))
SKELS      := $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS))
AGENT_SRCS := $(wildcard tools/jvmti/*.c)
AGENT      := $(BUILD)/libsparkprof-agent.so
UNIT_SRCS  := $(wildcard tests/unit/test_*.c)
UNIT_BINS  := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
FUZZ_SRCS  := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS  := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRCS))
TEST_PROGS_SRCS := $(wildcard tests/progs/*.c)
TEST_PROGS := $(patsubst tests/progs/%.c,$(BUILD)/progs/%,$(TEST_PROGS_SRCS))

JAVA_HOME ?= $(shell dirname $$(dirname $$(readlink -f $$(which javac 2>/dev/null) 2>/dev/null)) 2>/dev/null)
JNI_CFLAGS := -I$(JAVA_HOME)/include -I$(JAVA_HOME)/include/linux

.SECONDARY: $(BPF_OBJS) $(SKELS) $(PROTO_GEN_C) $(PROTO_GEN_H)
.PHONY: all deps test test-busy unit-tests fuzz test-progs bench bench-node-cost clean vmlinux image
all: sparkprof $(if $(AGENT_SRCS),$(AGENT))

sparkprof: $(USER_OBJS) $(PROTO_OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/libsparkprof.a: $(LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

# Every user object may include any skeleton or generated message header;
# generating them all first keeps the dependency rules simple.
$(BUILD)/user/%.o: user/%.c $(SKELS) $(PROTO_GEN_H)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

# One protoc-c run writes both files of a .proto.
$(BUILD)/proto/%.pb-c.c $(BUILD)/proto/%.pb-c.h: proto/%.proto
	@mkdir -p $(BUILD)/proto
	$(PROTOC_C) --proto_path=proto --c_out=$(BUILD)/proto $<

$(BUILD)/proto/%.pb-c.o: $(BUILD)/proto/%.pb-c.c $(PROTO_GEN_H)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# The web page assets are included by the assembler (.incbin), which -MMD does not see.
$(BUILD)/user/output/page_assets.o $(BUILD)/fuzz/obj/output/page_assets.o: $(wildcard user/output/web/*)

$(BUILD)/%.bpf.o: bpf/%.bpf.c $(wildcard include/*.h bpf/*.h) vmlinux/vmlinux.h | $(BUILD)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(LLVM_STRIP) -g $@  # keep BTF, drop DWARF: the skeleton embeds the object

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

$(AGENT): $(AGENT_SRCS) $(wildcard tools/jvmti/*.h include/sparkprof_helper_log.h) | $(BUILD)
	$(CC) $(CFLAGS) -Iinclude $(JNI_CFLAGS) -fPIC -shared -fvisibility=hidden \
	    -o $@ $(AGENT_SRCS) -lpthread -ldl

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libsparkprof.a $(wildcard tests/unit/*.h) | $(BUILD)/tests
	$(CC) $(CPPFLAGS) -Itests/unit $(CFLAGS) -o $@ $< $(BUILD)/libsparkprof.a $(LDLIBS)

# The helper's parts that need no JVM are tested on their own.
$(BUILD)/tests/test_method_ids: tests/unit/test_method_ids.c tools/jvmti/method_ids.c \
		tools/jvmti/method_ids.h tests/unit/tap.h | $(BUILD)/tests
	$(CC) -Itools/jvmti -Itests/unit $(CFLAGS) -o $@ $< tools/jvmti/method_ids.c

# The helper's log rotation, read back by the profiler's reader.
ROTATION_SRCS := $(addprefix tools/jvmti/,log_rotation.c publish.c code_table.c method_ids.c diag.c)
$(BUILD)/tests/test_log_rotation: tests/unit/test_log_rotation.c $(ROTATION_SRCS) \
		$(wildcard tools/jvmti/*.h) $(BUILD)/libsparkprof.a tests/unit/tap.h | $(BUILD)/tests
	$(CC) $(CPPFLAGS) -Itools/jvmti -Itests/unit $(JNI_CFLAGS) $(CFLAGS) -o $@ $< \
	    $(ROTATION_SRCS) $(BUILD)/libsparkprof.a $(LDLIBS)

$(BUILD)/progs/%: tests/progs/%.c | $(BUILD)/progs
	$(CLANG) -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-inline \
	    -fno-optimize-sibling-calls -Wall -Wextra -o $@ $< -lpthread -lm

# Fuzzers link an instrumented copy of the library (built once), so that
# coverage and sanitizers cover the parsers under test.
FUZZ_CFLAGS := -g -O1 -fsanitize=address,undefined -D_GNU_SOURCE
FUZZ_LIB_OBJS := $(patsubst $(BUILD)/user/%.o,$(BUILD)/fuzz/obj/%.o,$(filter $(BUILD)/user/%,$(LIB_OBJS))) \
                 $(patsubst $(BUILD)/proto/%.o,$(BUILD)/fuzz/proto/%.o,$(PROTO_OBJS))

$(BUILD)/fuzz/obj/%.o: user/%.c $(SKELS) $(PROTO_GEN_H)
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(CPPFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/fuzz/proto/%.o: $(BUILD)/proto/%.c $(PROTO_GEN_H)
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(CPPFLAGS) -c -o $@ $<

$(BUILD)/fuzz/libsparkprof-fuzz.a: $(FUZZ_LIB_OBJS)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/fuzz/%: tests/fuzz/%.c $(BUILD)/fuzz/libsparkprof-fuzz.a | $(BUILD)/fuzz
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(CPPFLAGS) -o $@ $< \
	    $(BUILD)/fuzz/libsparkprof-fuzz.a $(LDLIBS)

unit-tests: $(UNIT_BINS)
fuzz: $(FUZZ_BINS)
test-progs: $(TEST_PROGS)

$(BUILD) $(BUILD)/tests $(BUILD)/fuzz $(BUILD)/progs:
	mkdir -p $@

# Installs every build and test dependency (idempotent; needs root).
deps:
	tools/install-deps.sh

# The whole suite: unit tests, fuzzers, integration tests (root, real kernel).
test: all unit-tests fuzz test-progs
	$(PYTHON) -m pytest -ra tests

# The same with every CPU kept busy by a loop at normal priority: assertions
# must hold on a node doing other work (tools/busy.sh).
test-busy: all unit-tests fuzz test-progs
	tools/busy.sh $(PYTHON) -m pytest -ra tests

bench: all test-progs $(BUILD)/libsparkprof.a
	bench/run.sh

# Issue 14's node-cost table only: quick (~25 min); NODE_COST=--full for the long run.
bench-node-cost: all test-progs
	$(PYTHON) bench/node_cost.py $(NODE_COST)

# The node agent's container image (deploy/Containerfile); its base is made
# by `make deps` where base images cannot be pulled.
IMAGE      ?= sparkprof:latest
IMAGE_BASE ?= localhost/sparkprof-base:bookworm
image: all
	rm -rf $(BUILD)/image && mkdir -p $(BUILD)/image
	cp sparkprof $(AGENT) $(BUILD)/image/
	old=$$(podman image inspect -f '{{.Id}}' $(IMAGE) 2>/dev/null); \
	podman build --pull=never --build-arg BASE=$(IMAGE_BASE) -t $(IMAGE) \
	    -f deploy/Containerfile $(BUILD)/image && \
	if [ -n "$$old" ] && [ "$$old" != "$$(podman image inspect -f '{{.Id}}' $(IMAGE))" ]; then \
	    podman rmi "$$old" >/dev/null 2>&1 || true; fi

# Regenerate vmlinux/vmlinux.h from the running kernel's BTF.
vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/vmlinux.h

clean:
	rm -rf $(BUILD) sparkprof

-include $(USER_OBJS:.o=.d) $(FUZZ_LIB_OBJS:.o=.d)
