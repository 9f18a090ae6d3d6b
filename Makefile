# ptcollect — Intel PT collector over perf_event.
#
#   make            build build/ptcollect
#   make demo       install what is missing, build, record the bundled program, show `info`
#   make test       install what is missing, build, run every test (what CI runs)
#   make check      unit + host integration tests
#   make check-asan the same under ASan+UBSan (separate build dir)
#   make check-tsan the decoders' threads under ThreadSanitizer (build-tsan)
#   make check-kernel  tests against the real perf core in the QEMU kernel rig
#   make check-libipt  libipt's own test suite (../shared/libipt-tests): dump, decode
#   make fuzz       run every fuzz target for FUZZ_SECONDS each
#   make bench      speed and memory figures
#   make bench-kernel  ptcollect vs perf on the rig's simulated PT
#   make install / uninstall (PREFIX, DESTDIR)

VERSION   := 0.1.0
PREFIX    ?= /usr/local
BINDIR    ?= $(PREFIX)/bin
MANDIR    ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/vendor-completions

CC        ?= cc
BUILD     ?= build
PKGS      := libelf jansson capstone libbpf
OPT       ?= -O2 -g

# libipt: 2.2 or newer by default (Event Trace, TRIG, the errata of current CPUs): the
# system's when it is new enough, else Debian's 2.2, which scripts/libipt.sh fetches into
# $(IPT_DIR) the first time (a private apt configuration; make reads the $(IPT_DIR)/libipt.mk
# it writes), found through an rpath (`make install` puts it beside the binary).
# LIBIPT=system builds against the system's whatever its version (2.0.5, 2.1).
.DEFAULT_GOAL := all
IPT_DIR   ?= $(CURDIR)/build/libipt
LIBIPT    ?= auto
ifeq ($(LIBIPT),system)
IPT_LIBS  := -lipt
else ifneq ($(filter-out clean uninstall deps,$(or $(MAKECMDGOALS),all)),)
include $(IPT_DIR)/libipt.mk
$(IPT_DIR)/libipt.mk: scripts/libipt.sh
	@scripts/libipt.sh $(IPT_DIR)
endif
export IPT_CFLAGS IPT_LIBS

# -Wundef: an #if on a macro no header defined (PTC_LIBIPT without iptcaps.h) is an error,
# not a feature compiled out.
CFLAGS    += $(OPT) -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Wundef -Werror -Iinclude $(IPT_CFLAGS) \
	     -DPTC_VERSION='"$(VERSION)"' $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDLIBS    += $(shell pkg-config --libs $(PKGS) 2>/dev/null) $(IPT_LIBS)

ifeq ($(SAN),1)
CFLAGS    += -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS   += -fsanitize=address,undefined
endif
# -Wno-tsan: gcc warns that ThreadSanitizer does not model atomic_thread_fence(). The decoders'
# one (dsink's kick(): may a waiter sleep?) only decides a wakeup; the data goes over under the
# budget's lock, which it does model.
ifeq ($(SAN),thread)
CFLAGS    += -fsanitize=thread -fno-omit-frame-pointer -Wno-tsan
LDFLAGS   += -fsanitize=thread
endif

# One folder per layer (README.md, Layout); an object keeps its module's name.
SRCS      := $(wildcard src/*/*.c)
OBJS      := $(patsubst %.c,$(BUILD)/obj/%.o,$(notdir $(SRCS)))
vpath %.c $(sort $(dir $(SRCS)))
LIBOBJS   := $(filter-out $(BUILD)/obj/main.o,$(OBJS))
TESTLIB   := $(wildcard tests/lib/*.c)
TESTLIBOBJS := $(TESTLIB:tests/lib/%.c=$(BUILD)/obj/tests-lib/%.o)
UNIT      := $(wildcard tests/unit/*.c)
INTEG     := $(wildcard tests/integration/*.c)
UNITOBJS  := $(UNIT:tests/%.c=$(BUILD)/obj/tests/%.o)
INTEGOBJS := $(INTEG:tests/%.c=$(BUILD)/obj/tests/%.o)
BIN       := $(BUILD)/ptcollect
MANPAGES  := $(wildcard man/*.[1-8])

TEST_CFLAGS := $(shell pkg-config --cflags criterion 2>/dev/null) -Itests/lib
TEST_LIBS   := $(shell pkg-config --libs criterion 2>/dev/null)

.PHONY: all deps demo test check check-asan check-tsan check-kernel check-libipt check-run fuzz \
	fuzz-build bench bench-kernel install uninstall clean

all: $(BIN)

# V=1 shows the full command lines.
ifneq ($(V),1)
Q := @
endif

# Each object depends on the headers it includes (-MMD writes them to its .d; -MP adds an empty
# rule for each header, so that removing one does not break the build).
DEPFLAGS  := -MMD -MP

$(BUILD)/obj/%.o: %.c | $(BUILD)/obj
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(BUILD)/obj/tests-lib/%.o: tests/lib/%.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) $(TEST_CFLAGS) $(DEPFLAGS) -c -o $@ $<

-include $(OBJS:.o=.d) $(TESTLIBOBJS:.o=.d)

$(BUILD)/obj:
	mkdir -p $@

# Uprobe triggers: the BPF object (clang) and its skeleton (bpftool), both generated
# under $(BUILD); only trigger_bpf.c includes the skeleton.
BPF_CLANG ?= clang
BPFTOOL   ?= $(or $(shell command -v bpftool 2>/dev/null),/usr/sbin/bpftool)
BPF_SKEL  := $(BUILD)/bpf/trigbpf.skel.h

$(BUILD)/bpf/trigbpf.bpf.o: src/kernel/bpf/trigger.bpf.c src/kernel/bpf/trigger_bpf_event.h
	@mkdir -p $(dir $@)
	@echo "  BPF     $<"
	$(Q)$(BPF_CLANG) -g -O2 -target bpf -I/usr/include/$(shell $(CC) -print-multiarch) \
		-Isrc/kernel/bpf -c -o $@ $<

$(BPF_SKEL): $(BUILD)/bpf/trigbpf.bpf.o
	@echo "  SKEL    $@"
	$(Q)$(BPFTOOL) gen skeleton $< name trigbpf > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/trigger_bpf.o: $(BPF_SKEL)
$(BUILD)/obj/trigger_bpf.o: CFLAGS += -I$(BUILD)/bpf -Isrc/kernel/bpf

$(BIN): $(OBJS)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/obj/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) $(TEST_CFLAGS) $(DEPFLAGS) -c -o $@ $<

-include $(UNITOBJS:.o=.d) $(INTEGOBJS:.o=.d)

# The decoder's own headers (src/decode): the names cache's test reads its table, the
# report merge's test its look-ahead rule.
$(BUILD)/obj/tests/unit/test_names.o $(BUILD)/obj/tests/unit/test_report_agg.o: \
	CFLAGS += -Isrc/decode
# The uprobe program's limit, its steps run by hand.
$(BUILD)/obj/tests/unit/test_trigger_bpf.o: CFLAGS += -Isrc/kernel/bpf

$(BUILD)/tests/unit: $(UNITOBJS) $(LIBOBJS) $(TESTLIBOBJS)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(TEST_LIBS)

$(BUILD)/tests/integration: $(INTEGOBJS) $(TESTLIBOBJS) $(LIBOBJS)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(TEST_LIBS)

# Helpers the integration tests run as targets (small programs built with known symbols).
$(BUILD)/tests/progs/%: tests/progs/%.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) -O0 -g -pthread -o $@ $<

# Address-filter targets: the same program as non-PIE, static, and stripped to .dynsym;
# two static functions of one name; a function symbol without a size.
$(BUILD)/tests/progs/trigtarget-nopie: tests/progs/trigtarget.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O0 -g -pthread -no-pie -o $@ $<
$(BUILD)/tests/progs/filtertarget-nopie: tests/progs/filtertarget.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O0 -g -no-pie -o $@ $<
$(BUILD)/tests/progs/filtertarget-static: tests/progs/filtertarget.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O0 -g -static -o $@ $<
$(BUILD)/tests/progs/filtertarget-dynsym: tests/progs/filtertarget.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O0 -rdynamic -o $@ $< && strip $@
# Stripped, its .symtab in a separate file found through .gnu_debuglink.
$(BUILD)/tests/progs/filtertarget-debug: tests/progs/filtertarget.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O0 -g -o $@ $< && objcopy --only-keep-debug $@ $@.debug && \
		strip -g -s $@ && objcopy --add-gnu-debuglink=$@.debug $@
# Stale debug files, each from another build (-O1) of the same name. No build-ids, so only the
# CRC in .gnu_debuglink tells it apart (and -rdynamic leaves a .dynsym to fall back on):
$(BUILD)/tests/progs/filtertarget-staledebug: tests/progs/filtertarget.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O0 -g -rdynamic -Wl,--build-id=none -o $@ $< && \
		objcopy --only-keep-debug $@ $@.debug && strip -g -s $@ && \
		objcopy --add-gnu-debuglink=$@.debug $@ && \
		$(CC) -O1 -g -rdynamic -Wl,--build-id=none -o $@.other $< && \
		objcopy --only-keep-debug $@.other $@.debug && rm $@.other
# The stale file in place before the link is added: the CRC matches, the build-ids differ.
$(BUILD)/tests/progs/filtertarget-staleid: tests/progs/filtertarget.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O1 -g -o $@.other $< && objcopy --only-keep-debug $@.other $@.debug && \
		rm $@.other && $(CC) -O0 -g -o $@ $< && strip -g -s $@ && \
		objcopy --add-gnu-debuglink=$@.debug $@
$(BUILD)/tests/progs/dupsyms: tests/progs/dupsyms/a.c tests/progs/dupsyms/b.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O0 -g -o $@ $^
# A poll() that fails (LD_PRELOAD), for the record loop's failed wait.
$(BUILD)/tests/progs/pollfail.so: tests/progs/pollfail/pollfail.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O0 -g -shared -fPIC -o $@ $< -ldl
$(BUILD)/tests/progs/zerosize: tests/progs/zerosize/main.c tests/progs/zerosize/zero.S
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O0 -g -o $@ $^
# The trace generators of the decode tests and the bench (libipt's encoder).
# Both share tests/gen/ptenc.c (the encoder, the trace file); bench/decode builds the same.
$(BUILD)/tests/progs/ptgen $(BUILD)/tests/progs/ptwalk: $(BUILD)/tests/progs/%: tests/gen/%.c \
		tests/gen/ptenc.c tests/gen/ptenc.h
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) -O2 -g -std=gnu11 -Wall -Wextra -Wundef -Werror $(IPT_CFLAGS) -o $@ \
		$(filter %.c,$^) $(IPT_LIBS)
# C++: overloads whose demangled names differ only in their parameters.
$(BUILD)/tests/progs/cxx: tests/progs/cxx/main.cc
	@mkdir -p $(dir $@)
	$(Q)$(CXX) -O0 -g -o $@ $<

# The rig's played program and ptplay, which derives its PT stream (tests/kernel/README.md,
# "Played streams"); tests/kernel/run-tests builds the same two for the guest.
$(BUILD)/tests/progs/playprog: tests/kernel/play/prog.S
	@mkdir -p $(dir $@)
	$(Q)$(CC) -nostdlib -static -no-pie -Wl,-Ttext=0x401000 -o $@ $<
$(BUILD)/tests/progs/ptplay: tests/kernel/play/ptplay.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) $(shell pkg-config --cflags capstone) $(LDFLAGS) -o $@ $< \
		$(shell pkg-config --libs capstone) $(IPT_LIBS)

TESTPROGS := $(patsubst tests/progs/%.c,$(BUILD)/tests/progs/%,$(wildcard tests/progs/*.c)) \
	$(addprefix $(BUILD)/tests/progs/,ptgen ptwalk trigtarget-nopie filtertarget-nopie filtertarget-static \
		filtertarget-dynsym filtertarget-debug filtertarget-staledebug \
		filtertarget-staleid dupsyms zerosize cxx playprog ptplay pollfail.so)

deps:
	@LIBIPT=$(LIBIPT) IPT_DIR=$(IPT_DIR) scripts/deps.sh

# Criterion runs the tests of one binary in parallel; the integration tests drive the
# built binary and the fixture PMUs under tests/fixtures.
# A test's cr_log_warn() says what the machine did (a hypervisor's lost debug exception) and
# fails nothing; Criterion 2.4 would make the whole run exit 1 on it, every test passing.
check-run: $(BIN) $(BUILD)/tests/unit $(BUILD)/tests/integration $(TESTPROGS)
	$(BUILD)/tests/unit --jobs 2 --ignore-warnings
	PTCOLLECT_BIN=$(abspath $(BIN)) PTCOLLECT_TESTPROGS=$(abspath $(BUILD)/tests/progs) \
	PTCOLLECT_SRCDIR=$(CURDIR) $(BUILD)/tests/integration --jobs 2 --ignore-warnings

check:
	$(MAKE) check-run

# A leak or a report in a test's own process does not fail its Criterion test: the
# log is read for sanitizer reports too.
check-asan:
	@mkdir -p build-asan
	@{ $(MAKE) BUILD=build-asan SAN=1 OPT='-O1 -g' check-run; echo $$? >build-asan/check.rc; } \
		2>&1 | tee build-asan/check.log
	@test "$$(cat build-asan/check.rc)" = 0
	@! grep -n 'ERROR: [A-Za-z]*Sanitizer\|runtime error:' build-asan/check.log || \
		{ echo "check-asan: sanitizer reports above (build-asan/check.log)" >&2; exit 1; }

# The decoders' threads under ThreadSanitizer (tests/tsan/run): each mode at -J 2 and -J 4.
check-tsan:
	$(MAKE) BUILD=build-tsan SAN=thread OPT='-O1 -g' build-tsan/ptcollect \
		build-tsan/tests/progs/ptgen build-tsan/tests/progs/ptwalk
	tests/tsan/run build-tsan

check-kernel: $(BIN)
	tests/kernel/run-tests $(abspath $(BIN))

# libipt's suite run as its script/test.bash runs it (pttc makes each trace and the expected
# output), ptcollect in the place of its tools; tests/libipt/exceptions-* list what differs.
check-libipt: $(BIN)
	PTCOLLECT_BIN=$(abspath $(BIN)) tests/libipt/run dump
	PTCOLLECT=$(abspath $(BIN)) tests/libipt/decode

# The fuzz targets share one instrumented build of the sources (-fsanitize=fuzzer-no-link
# objects under $(BUILD)/fuzz/obj), each linked with its tests/fuzz/fuzz_NAME.c; tests/fuzz/run
# builds them through `make fuzz-build` (or only the targets it is given) and runs them.
FUZZ_CC     ?= clang
FUZZ_CFLAGS := -g -O1 -std=gnu11 -D_GNU_SOURCE -DPTC_VERSION='"fuzz"' -Iinclude $(IPT_CFLAGS) \
	       -I$(BUILD)/bpf -Isrc/kernel/bpf $(shell pkg-config --cflags $(PKGS) 2>/dev/null) \
	       -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_OBJS   := $(LIBOBJS:$(BUILD)/obj/%.o=$(BUILD)/fuzz/obj/%.o)
FUZZ_BINS   := $(patsubst tests/fuzz/fuzz_%.c,$(BUILD)/fuzz/fuzz_%,$(wildcard tests/fuzz/fuzz_*.c))

$(BUILD)/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $< (fuzz)"
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(DEPFLAGS) -c -o $@ $<

$(BUILD)/fuzz/obj/trigger_bpf.o: $(BPF_SKEL)

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJS)
	@echo "  LD      $@"
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(DEPFLAGS) -o $@ $< $(FUZZ_OBJS) $(LDLIBS)

-include $(FUZZ_OBJS:.o=.d) $(FUZZ_BINS:=.d)

.SECONDARY: $(FUZZ_OBJS)

fuzz-build: $(FUZZ_BINS)

fuzz: $(BPF_SKEL)
	tests/fuzz/run $(FUZZ_SECONDS)

bench: $(BIN)
	bench/run $(abspath $(BIN))

# perf's side of the trigger-to-freeze figure: a watcher on ptcollect's own trigger library.
$(BUILD)/bench/trigwatch: bench/trigwatch.c $(LIBOBJS)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBOBJS) $(LDLIBS)

# ptcollect and perf recording the same workload in the kernel rig, side by side.
bench-kernel: $(BIN) $(BUILD)/bench/trigwatch
	tests/kernel/bench-kernel $(abspath $(BIN))

demo: deps $(BIN)
	scripts/demo.sh $(abspath $(BIN))

# The oracle tests fail, rather than skip, when the reference data is missing.
test: export PTCOLLECT_REQUIRE_SHARED = 1
test: deps
	@scripts/need-shared.sh
	$(MAKE) check
	$(MAKE) check-libipt
	$(MAKE) check-asan
	$(MAKE) check-tsan
	$(MAKE) fuzz
	$(MAKE) check-kernel

# With the fetched libipt, the installed binary is linked again with only the rpath beside it
# (the build's binary also finds build/libipt, which an installed one must not name).
ifneq ($(IPT_LIBDIR),)
$(BUILD)/ptcollect.install: $(OBJS)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(filter-out $(IPT_LIBS),$(LDLIBS)) $(IPT_LIBS_INSTALL)
INSTALL_BIN := $(BUILD)/ptcollect.install
else
INSTALL_BIN := $(BIN)
endif

install: $(INSTALL_BIN)
	install -D -m 0755 $(INSTALL_BIN) $(DESTDIR)$(BINDIR)/ptcollect
ifneq ($(IPT_LIBDIR),)
	install -D -m 0644 $(IPT_LIBDIR)/libipt.so.2 $(DESTDIR)$(PREFIX)/lib/ptcollect/libipt.so.2
endif
	for m in $(MANPAGES); do \
		s=$${m##*.}; install -D -m 0644 $$m $(DESTDIR)$(MANDIR)/man$$s/$${m#man/}; done
	install -D -m 0644 completions/ptcollect.bash $(DESTDIR)$(BASHCOMPDIR)/ptcollect
	install -D -m 0644 completions/_ptcollect $(DESTDIR)$(ZSHCOMPDIR)/_ptcollect

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/ptcollect $(DESTDIR)$(PREFIX)/lib/ptcollect/libipt.so.2
	for m in $(MANPAGES); do \
		s=$${m##*.}; rm -f $(DESTDIR)$(MANDIR)/man$$s/$${m#man/}; done
	rm -f $(DESTDIR)$(BASHCOMPDIR)/ptcollect $(DESTDIR)$(ZSHCOMPDIR)/_ptcollect

clean:
	rm -rf build build-asan build-tsan
