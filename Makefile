# sdp: the one entry point.
#
#   make check    deps, then on every kernel of the bed (bed/kernels: Debian
#                 12's 6.1, Debian 13's 6.12 and the newest trixie-backports
#                 kernel): lint, DKMS install, the suite in the guest (its
#                 core on each kernel, and one half of the rest on 6.1, the
#                 other on the newest: bed/check-kernels), the DKMS
#                 install life on the Debian 13 root (host-tests/
#                 dkms_life.sh) and the bench report's checks
#                 (host-tests/bench_report.sh), the host's work beside the
#                 guests; a summary line per kernel, the times, one `N
#                 passed, N failed`; it fails past CHECK_BUDGET_MIN
#   make check KVER=K   the same on kernel K alone (no budget)
#   make check-all      the same with the whole suite on every kernel and
#                 the DKMS life on every root (no budget)
#   make check-debug    the whole suite on the bed's debug kernel (KASAN,
#                 kmemleak, lockdep ...: bed/debug-kernel builds it first
#                 where it is missing)
#   make demo     deps, DKMS install, SDP between the bed's two hosts, on the
#                 newest kernel (KVER=K for another)
#   make deps     install what the rest needs: the host's packages and the
#                 Debian 13 root of the newer kernels (idempotent)
#   make modules  build sdp.ko in place, for development
#   make lint     sparse (C=2), W=1 and checkpatch --strict on kmod/;
#                 checkpatch --strict on the test modules under userspace-tests/
#   make install / uninstall   DKMS install / removal for KVER
#   make shell    an interactive shell in the test bed
#   make bench    deps, DKMS install, figures from the bed (KVER: its kernel): qperf, rstream,
#                 RPC, NFS, and real programs over TCP, libsdp and
#                 librspreload (tables and plots; see userspace-tests/bench/run-bench)
#   make read-sock-test  the in-kernel test modules (part of `make userspace`)
#   make krpc-bw-test    the kernel RPC bandwidth client and server modules
#                 (part of `make userspace`)
#   make sunrpc-modules  the patched sunrpc.ko and nfs.ko (sunrpc-patches/build)
#                 into build/sunrpc/KVER, for the tests (part of `make userspace`)
#
# KVER defaults to the host's Debian 12 kernel (bed/kver).  A kernel of the
# Debian 13 root is built in that root, with its gcc-14 and its user space
# (bed/in-root), into build/debian13/.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

TOP      := $(CURDIR)
BED      := $(TOP)/userspace-tests/bed
VERSION  := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
KVER     ?= $(shell $(BED)/kver 2>/dev/null)

# When this run began (the first make of it, before the dependencies): the
# time make check reports and holds to its budget.
ifndef SDP_CHECK_START
export SDP_CHECK_START := $(shell date +%s)
endif

ifeq ($(strip $(KVER)),)
# A machine with nothing installed yet: the dependencies first, then the
# same goals again, now that the bed's kernel can be named.
ifneq ($(SDP_DEPS_DONE),)
$(error no kernel for the bed after installing the dependencies: see bed/kver)
endif
Makefile: ;
%::
	@$(BED)/install-deps
	@$(BED)/debian13-root >/dev/null
	@$(MAKE) --no-print-directory SDP_DEPS_DONE=1 $(MAKECMDGOALS)
else

# The root KVER boots in: / (here) or another root, whose build runs in
# there (IN_ROOT=1 is that build) and goes to build/ROOTNAME.
KROOT    := $(if $(IN_ROOT),/,$(shell $(BED)/kernels --root $(KVER) 2>/dev/null || echo /))
BUILD    ?= $(TOP)/build$(if $(filter-out /,$(KROOT)),/$(notdir $(KROOT)))
KDIR     ?= /lib/modules/$(KVER)/build
KSERIES  := $(shell sed -E 's/^([0-9]+\.[0-9]+).*/\1/' <<<'$(KVER)')
KSRC_TAR := /usr/src/linux-source-$(KSERIES).tar.xz
KSRC     := $(BUILD)/linux-source-$(KSERIES)
KSFT     := $(KSRC)/tools/testing/selftests
CHECKPATCH := $(KSRC)/scripts/checkpatch.pl

KMOD_SRC := $(wildcard kmod/*.c kmod/*.h kmod/include/uapi/linux/*.h)
KMOD_COMPAT := kmod/sdp_compat.h
SUNRPC_SRC := sunrpc-patches/build $(wildcard sunrpc-patches/*/*.patch)

CFLAGS_USER := -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE \
	       -I$(TOP)/kmod/include/uapi -I$(TOP)/userspace-tests/lib -isystem $(KSFT)
TEST_C   := $(wildcard userspace-tests/selftests/*.c)
TOOL_C   := $(wildcard userspace-tests/tools/*.c)
TEST_BIN := $(patsubst userspace-tests/selftests/%.c,$(BUILD)/selftests/%,$(TEST_C))
TOOL_BIN := $(patsubst userspace-tests/tools/%.c,$(BUILD)/tools/%,$(TOOL_C))
# Libraries a tool needs beyond -lpthread: LDLIBS_<tool>.
LDLIBS_sdp_hostile := -lrdmacm -libverbs
LDLIBS_sdp_wirefuzz := -lrdmacm -libverbs
# Sources a tool has beyond its own: TOOL_SRC_<tool>.  The peers of our
# own (rdma_peer.c) speak SDP through their own verbs objects.
PEER_SRC := userspace-tests/tools/peer/rdma_peer.c
TOOL_SRC_sdp_hostile := $(PEER_SRC)
TOOL_SRC_sdp_wirefuzz := $(PEER_SRC)
LDLIBS_conn_rate := -lrdmacm

# User-space ONC RPC: the interposer built from the libtirpc series' own
# source file, and the RPC bandwidth programs.
TIRPC_CFLAGS := -I/usr/include/tirpc -I$(TOP)/libtirpc-patches
TIRPC_SDP_SRC := libtirpc-patches/interposer.c libtirpc-patches/rpc_sdp.c
INTERPOSER := $(BUILD)/libtirpc/libtirpc-sdp.so
RPC_BIN  := $(BUILD)/rpc/rpc_bw_server $(BUILD)/rpc/rpc_bw_client

# Unmodified TCP programs onto SDP: the preload, its wrapper and man pages.
LIBSDP_SRC := libsdp/preload.c libsdp/rules.c
LIBSDP   := $(BUILD)/libsdp/libsdp.so
MANDIR   := /usr/local/share/man
JDK      = $(lastword $(sort $(wildcard /usr/lib/jvm/java-*-openjdk-amd64)))
JAVA_CLASSES := $(patsubst userspace-tests/java/%.java,$(BUILD)/java/%.class, \
		$(wildcard userspace-tests/java/*.java))
LIBDIR   := /usr/local/lib
# Preloaded beside libsdp.so by libsdp.sh (what the library's calls reach).
SHIM_SO  := $(patsubst userspace-tests/shims/%.c,$(BUILD)/shims/%.so,$(wildcard userspace-tests/shims/*.c))

# The suite, in the order it runs in the guest.
TESTS := userspace-tests/tests/rxe_link.sh \
	 $(BUILD)/selftests/socket_api \
	 $(BUILD)/selftests/connect_accept \
	 $(BUILD)/selftests/stream_data \
	 $(BUILD)/selftests/stream_zcopy \
	 $(BUILD)/selftests/stream_rzcopy \
	 $(BUILD)/selftests/stream_flags \
	 $(BUILD)/selftests/stream_poll \
	 $(BUILD)/selftests/stream_close \
	 $(BUILD)/selftests/stream_opts \
	 $(BUILD)/selftests/stream_misc \
	 $(BUILD)/selftests/faults \
	 $(BUILD)/selftests/faults_link \
	 $(BUILD)/selftests/fallback \
	 $(BUILD)/selftests/libsdp_rules \
	 userspace-tests/tests/libsdp.sh \
	 userspace-tests/tests/apps_iperf3.sh \
	 userspace-tests/tests/apps_redis.sh \
	 userspace-tests/tests/apps_nginx.sh \
	 userspace-tests/tests/apps_ssh.sh \
	 userspace-tests/tests/read_sock.sh \
	 userspace-tests/tests/rx_nomem.sh \
	 userspace-tests/tests/qperf_sdp.sh \
	 userspace-tests/tests/jdk_sdp.sh \
	 userspace-tests/tests/hostile_peer.sh \
	 userspace-tests/tests/race_fuzz.sh \
	 userspace-tests/tests/policy.sh \
	 userspace-tests/tests/proc_net_sdp.sh \
	 userspace-tests/tests/observability.sh \
	 userspace-tests/tests/rpc_user.sh \
	 userspace-tests/tests/rpc_kernel.sh \
	 $(BUILD)/selftests/listen_backlog \
	 userspace-tests/tests/scale.sh \
	 userspace-tests/tests/idle_memory.sh \
	 userspace-tests/tests/reuseport.sh \
	 userspace-tests/tests/sunrpc_modules.sh \
	 userspace-tests/tests/nfs_sdp.sh \
	 userspace-tests/tests/nfs_faults.sh \
	 userspace-tests/tests/apps_ganesha.sh \
	 userspace-tests/tests/module_lifecycle.sh

# The core of the suite: the socket contract, then kernel RPC, the memory
# bound of idle connections and NFS over SDP.  `make check` runs it on
# every kernel of the bed.  Real programs under libsdp add user space to
# it (libsdp, the programs' own calls, which differ between Debian 12 and
# 13, not between the two kernels of the Debian 13 root): iperf3, nginx
# (whose sendfile's kernel path also changed in 6.5) and NFS-Ganesha (its
# kernel NFS client is nfs_sdp.sh's) run on the oldest and the newest
# kernel, one of each root (TESTS_EDGES); OpenSSH and redis, whose
# sessions are plain reads and writes, on the oldest alone.  CI's time
# holds three kernels.
TESTS_CORE := userspace-tests/tests/rxe_link.sh \
	 $(BUILD)/selftests/socket_api \
	 $(BUILD)/selftests/connect_accept \
	 $(BUILD)/selftests/stream_data \
	 $(BUILD)/selftests/stream_rzcopy \
	 $(BUILD)/selftests/stream_flags \
	 $(BUILD)/selftests/stream_poll \
	 $(BUILD)/selftests/stream_close \
	 $(BUILD)/selftests/fallback \
	 userspace-tests/tests/policy.sh \
	 userspace-tests/tests/idle_memory.sh \
	 userspace-tests/tests/rpc_kernel.sh \
	 userspace-tests/tests/sunrpc_modules.sh \
	 userspace-tests/tests/nfs_sdp.sh
TESTS_EDGES := userspace-tests/tests/apps_iperf3.sh \
	 userspace-tests/tests/apps_nginx.sh \
	 userspace-tests/tests/apps_ganesha.sh

# The rest of the suite in two halves of about the same time: `make check`
# runs the core and one half on the oldest kernel, the core and the other
# on the newest, the core alone on a kernel between them, so that every
# test runs on some kernel and CI's time holds three kernels.  The newest
# half has what Soft-RoCE's own behaviour decides most (transport loss,
# links and devices going away, peers that break the protocol); make
# check-all runs the whole suite on every kernel.
TESTS_OLDEST := $(BUILD)/selftests/stream_opts \
	 $(BUILD)/selftests/libsdp_rules \
	 userspace-tests/tests/libsdp.sh \
	 userspace-tests/tests/apps_redis.sh \
	 userspace-tests/tests/apps_ssh.sh \
	 userspace-tests/tests/read_sock.sh \
	 userspace-tests/tests/jdk_sdp.sh \
	 userspace-tests/tests/proc_net_sdp.sh \
	 userspace-tests/tests/rpc_user.sh \
	 $(BUILD)/selftests/listen_backlog \
	 userspace-tests/tests/scale.sh \
	 userspace-tests/tests/nfs_faults.sh \
	 userspace-tests/tests/module_lifecycle.sh
TESTS_NEWEST := $(filter-out $(TESTS_CORE) $(TESTS_OLDEST),$(TESTS))    # (TESTS_EDGES too)

# SUITE: full, core, or core plus one half (oldest, newest), in the
# suite's order.
SUITE ?= full
SUITE_TESTS = $(if $(filter full,$(SUITE)),$(TESTS),$(filter $(TESTS_CORE) \
	$(if $(filter oldest,$(SUITE)),$(TESTS_OLDEST) $(TESTS_EDGES)) \
	$(if $(filter newest,$(SUITE)),$(TESTS_NEWEST)),$(TESTS)))

.PHONY: all deps modules lint install uninstall userspace check check-all check-debug check-kernel fuzz \
	check-build check-guest demo \
	demo-kernel shell clean bench read-sock-test krpc-bw-test sunrpc-modules

all: modules

# What the host needs and the Debian 13 root; inside that root, nothing
# more (bed/debian13-root installed it); nothing once this run installed
# them (SDP_DEPS_DONE: check-kernels' builds, which must not remake a root
# whose kernel a guest runs).
deps:
ifeq ($(IN_ROOT)$(SDP_DEPS_DONE),)
	@$(BED)/install-deps
	@$(BED)/debian13-root >/dev/null
endif

# Every kernel of the bed, or KVER alone when it is given, then the host
# tests (the DKMS install life); check-all runs the whole suite on each.
# A `make check` of every kernel fails when it takes longer than
# CHECK_BUDGET_MIN minutes, counted from make's start (installing the
# dependencies too), so that a change that makes CI slower shows in the
# developer's own run before CI's time runs out (90 minutes).
CHECK_BUDGET_MIN := 50

check: deps
	@SDP_CHECK_BUDGET_MIN=$(CHECK_BUDGET_MIN) \
		$(BED)/check-kernels $(if $(filter command line,$(origin KVER)),$(KVER))

check-all: deps
	@SDP_CHECK_ALL=1 $(BED)/check-kernels $(if $(filter command line,$(origin KVER)),$(KVER))

# The debug kernel (bed/debug-kernel: KASAN, kmemleak, lockdep, UBSAN ...;
# built where it is missing or stale, about an hour), then the whole suite
# on it.
check-debug: deps
	@k=$$($(BED)/debug-kernel) && SDP_CHECK_ALL=1 $(BED)/check-kernels "$$k"

# One kernel: its build and its suite in the guest (SUITE: the whole suite,
# or a part of it: core, oldest, newest); check-kernels runs the two
# halves apart (check-build, check-guest), the builds beside the guests.
check-kernel: check-build
	@$(MAKE) --no-print-directory check-guest

check-build: lint install userspace

check-guest:
	@$(BED)/vm-run --kver $(KVER) --build $(BUILD) $(SUITE_TESTS)

# The fuzzers on one kernel (KVER: the host's unless given; the debug
# kernel's name for the long runs): SEED, COUNT cases of each (the wire
# fuzzer's take about 0.7 s on the stock kernels, the race fuzzer's 1.5 s).
# A failed case prints the command that replays it; `make fuzz SEED=S
# COUNT=1` runs it again in a fresh guest.  (`make check` runs 100 race
# cases on the newest kernel; the wire fuzzer joins it once the four
# seeds of 1-200 that fail on 7.3 are understood: docs/fuzzing.md.)
SEED  ?= 1
COUNT ?= 1000
FUZZ_TESTS := userspace-tests/tests/rxe_link.sh userspace-tests/tests/wire_fuzz.sh \
	      userspace-tests/tests/race_fuzz.sh

fuzz: deps
	@$(MAKE) --no-print-directory check-build
	@SDP_FUZZ_SEED=$(SEED) SDP_FUZZ_COUNT=$(COUNT) SDP_FUZZ_ARGS="$(FUZZ_ARGS)" \
		SDP_VM_TIMEOUT=$$(($(COUNT) * 10 + 1200)) SDP_TEST_TIMEOUT=$$(($(COUNT) * 8 + 600)) \
		$(BED)/vm-run --kver $(KVER) --build $(BUILD) $(FUZZ_TESTS)

demo: deps
	@$(MAKE) --no-print-directory demo-kernel \
		KVER=$(if $(filter command line,$(origin KVER)),$(KVER),$$($(BED)/kernels --newest))

demo-kernel: install userspace
	@$(BED)/vm-run --kver $(KVER) --build $(BUILD) --demo

shell: install userspace
	@$(BED)/vm-run --kver $(KVER) --build $(BUILD) --shell

bench: install userspace
	@$(TOP)/userspace-tests/bench/run-bench --kver $(KVER) --build $(BUILD)

ifneq ($(KROOT),/)
# A kernel of another root: built in there, by that root's own tools.
IN_ROOT_MAKE := $(BED)/in-root $(KROOT) make --no-print-directory IN_ROOT=1 \
	KVER=$(KVER) BUILD=$(BUILD)
modules lint install uninstall userspace read-sock-test krpc-bw-test sunrpc-modules: deps
	@$(IN_ROOT_MAKE) $@
clean:
	rm -rf $(BUILD)
else

# Only the pieces of the kernel source the project uses: checkpatch and
# the kselftest headers (never copied into the repository).
$(KSRC)/.extracted: $(KSRC_TAR)
	@rm -rf $(KSRC) && mkdir -p $(KSRC)
	@tar -xJf $(KSRC_TAR) -C $(KSRC) --strip-components=1 \
		linux-source-$(KSERIES)/scripts/checkpatch.pl \
		linux-source-$(KSERIES)/scripts/spelling.txt \
		linux-source-$(KSERIES)/scripts/const_structs.checkpatch \
		linux-source-$(KSERIES)/tools/testing/selftests/kselftest.h \
		linux-source-$(KSERIES)/tools/testing/selftests/kselftest_harness.h
	@touch $@

modules:
	$(MAKE) -C $(KDIR) M=$(TOP) modules

lint: deps $(KSRC)/.extracted
	@echo "lint: sparse C=2, W=1, checkpatch --strict on kmod/ for $(KVER)"
	@mkdir -p $(BUILD)
	@rm -f sdp.ko sdp.o sdp.mod sdp.mod.c sdp.mod.o kmod/*.o  # (not kbuild's clean: it would empty build/ too)
	@$(MAKE) -C $(KDIR) M=$(TOP) C=2 W=1 modules >$(BUILD)/lint.log 2>&1 || \
		{ cat $(BUILD)/lint.log; exit 1; }
	@if grep -E 'warning:|error:' $(BUILD)/lint.log; then exit 1; fi
	@$(CHECKPATCH) --strict --no-tree --quiet --show-types -f $(filter-out $(KMOD_COMPAT),$(KMOD_SRC))
	@# (the compat headers are where the kernel's version is compared, by design)
	@$(CHECKPATCH) --strict --no-tree --quiet --show-types \
		--ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON -f $(KMOD_COMPAT) $(KRPC_COMPAT)
	@echo "lint: checkpatch --strict on the test modules"
	@$(CHECKPATCH) --strict --no-tree --quiet --show-types -f $(filter-out $(KRPC_COMPAT),$(KRPC_LINT))
	@echo "lint: clean"

# A fresh copy of the tree under /usr/src each time, so DKMS never builds
# a stale one; built for the bed's kernel, not the running one.  When DKMS
# already holds this version from the very same tree (`make install` for
# one kernel of a root after another), the other kernels' builds stay and
# KVER's alone is made anew; any other tree or version goes first, with
# all it installed.
DKMS_SRC := /usr/src/sdp-$(VERSION)
DKMS_STAGE := $(BUILD)/dkms-src

# Every sdp version DKMS holds goes, as a package upgrade or removal takes
# the old one away, and with it what an older sdp left behind where DKMS
# no longer saw it installed (its tree; sdp.ko, and sunrpc.ko and nfs.ko
# of version sdp-*, in updates/dkms).
define dkms_remove_all
for v in $$(ls /var/lib/dkms/sdp 2>/dev/null | grep -E '^[0-9]'); do \
	dkms remove sdp/$$v --all >/dev/null 2>&1 || true; \
	rm -rf /usr/src/sdp-$$v; \
done; \
rm -rf /var/lib/dkms/sdp; \
for f in /lib/modules/*/updates/dkms/{sdp,sunrpc,nfs}.ko*; do \
	[[ -e $$f ]] || continue; \
	[[ $${f##*/} == sdp.ko* || $$(modinfo -F version "$$f") == sdp-* ]] || continue; \
	rm -f "$$f"; k=$${f#/lib/modules/}; depmod "$${k%%/*}"; \
done
endef
# The SunRPC modules DKMS just built are what make sunrpc-modules builds
# from the same source: the tests take them, and their ABI check from the
# build's log (SUNRPC_OUT, newer than the source: not built again), which
# saves a kernel build of them.
define sunrpc_from_dkms
m=/var/lib/dkms/sdp/$(VERSION)/$(KVER)/$$(uname -m)/module; \
for k in sunrpc nfs; do [[ -f $$m/$$k.ko || -f $$m/$$k.ko.xz ]] || exit 0; done; \
rm -rf $(SUNRPC_OUT) && mkdir -p $(SUNRPC_OUT) && \
grep -E '^(sunrpc|nfs)\.ko: .* exported symbols' $$m/../log/make.log >$(SUNRPC_OUT)/abi.txt && \
for k in sunrpc nfs; do \
	if [[ -f $$m/$$k.ko ]]; then cp $$m/$$k.ko $(SUNRPC_OUT)/; \
	else xz -dc $$m/$$k.ko.xz >$(SUNRPC_OUT)/$$k.ko; fi || exit 1; \
done; \
echo "install: $(SUNRPC_OUT)/{sunrpc,nfs}.ko, for the tests, from DKMS"
endef
install: deps $(INTERPOSER) $(LIBSDP)
	@rm -rf $(DKMS_STAGE) && mkdir -p $(DKMS_STAGE)
	@cp --parents Kbuild dkms.conf $(KMOD_SRC) $(SUNRPC_SRC) $(DKMS_STAGE)/
	@if [[ -d /var/lib/dkms/sdp/$(VERSION) && \
	      $$(ls /var/lib/dkms/sdp | grep -E '^[0-9]') == $(VERSION) ]] && \
	    diff -r -q $(DKMS_STAGE) $(DKMS_SRC) >/dev/null 2>&1; then \
		dkms remove sdp/$(VERSION) -k $(KVER) >/dev/null 2>&1 || true; \
	else \
		$(dkms_remove_all); \
		rm -rf $(DKMS_SRC) && cp -r $(DKMS_STAGE) $(DKMS_SRC); \
	fi
	@{ { [[ -e /var/lib/dkms/sdp/$(VERSION)/source ]] || dkms add sdp/$(VERSION); } && \
	   dkms build sdp/$(VERSION) -k $(KVER) && \
	   dkms install sdp/$(VERSION) -k $(KVER) --force; } >$(BUILD)/dkms.log 2>&1 || \
		{ cat $(BUILD)/dkms.log; echo "install: DKMS failed (log: $(BUILD)/dkms.log)"; exit 1; }
	@echo "install: sdp $(VERSION) installed by DKMS for $(KVER)"
	@$(sunrpc_from_dkms)
	@install -D -m 0755 $(INTERPOSER) $(LIBDIR)/libtirpc-sdp.so
	@grep -qE '^sdp[[:space:]]' /etc/netconfig || cat libtirpc-patches/netconfig.sdp >>/etc/netconfig
	@echo "install: $(LIBDIR)/libtirpc-sdp.so and the netids sdp, sdp6 in /etc/netconfig"
	@install -D -m 0755 $(LIBSDP) $(LIBDIR)/libsdp.so
	@install -D -m 0755 libsdp/sdp_run /usr/local/bin/sdp_run
	@install -D -m 0644 libsdp/sdp_run.8 $(MANDIR)/man8/sdp_run.8
	@install -D -m 0644 libsdp/libsdp.conf.5 $(MANDIR)/man5/libsdp.conf.5
	@[[ -e /etc/libsdp.conf ]] || install -m 0644 libsdp/libsdp.conf /etc/libsdp.conf
	@echo "install: $(LIBDIR)/libsdp.so, /usr/local/bin/sdp_run, their man pages, /etc/libsdp.conf"

uninstall:
	@$(dkms_remove_all)
	@rm -f $(LIBDIR)/libtirpc-sdp.so $(LIBDIR)/libsdp.so /usr/local/bin/sdp_run \
		$(MANDIR)/man8/sdp_run.8 $(MANDIR)/man5/libsdp.conf.5
	@cmp -s libsdp/libsdp.conf /etc/libsdp.conf && rm -f /etc/libsdp.conf || true
	@sed -i -e '/^# sdp, sdp6: /d' -e '/^sdp6\{0,1\}[[:space:]]/d' /etc/netconfig
	@echo "uninstall: sdp removed from DKMS, $(LIBDIR) and /etc/netconfig"

userspace: deps $(TEST_BIN) $(TOOL_BIN) $(RPC_BIN) $(INTERPOSER) $(LIBSDP) $(SHIM_SO) $(JAVA_CLASSES) \
	   read-sock-test krpc-bw-test sunrpc-modules

# The Java programs of jdk_sdp.sh, by the root's own Debian OpenJDK (17 on
# Debian 12, 21 on Debian 13), whose java runs them.
$(BUILD)/java/%.class: userspace-tests/java/%.java
	@mkdir -p $(@D)
	$(JDK)/bin/javac -d $(@D) $<

# (every program rebuilt when a shared header changes; sdp_ktest.h is the
# test modules')
TEST_H   := $(filter-out userspace-tests/lib/sdp_ktest.h, \
	      $(wildcard userspace-tests/lib/*.h kmod/include/uapi/linux/*.h))

# (the kselftest headers order-only: each kernel series of a root extracts
# its own, and a later one must not rebuild what another kernel's guest
# may be running)
$(BUILD)/selftests/%: userspace-tests/selftests/%.c $(TEST_H) | $(KSRC)/.extracted
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_USER) -I$(TOP)/libsdp -o $@ $< $(SRC_$*) -lpthread

# (the rules test takes the preload's parser as it is)
SRC_libsdp_rules := libsdp/rules.c
$(BUILD)/selftests/libsdp_rules: libsdp/rules.c libsdp/rules.h

$(LIBSDP): $(LIBSDP_SRC) libsdp/rules.h $(TEST_H)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_USER) -shared -fPIC -fvisibility=hidden -o $@ $(LIBSDP_SRC) -ldl -lpthread

$(BUILD)/tools/%: userspace-tests/tools/%.c $(TEST_H)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_USER) -I$(TOP)/userspace-tests/tools -o $@ $< $(TOOL_SRC_$*) -lpthread $(LDLIBS_$*)
$(BUILD)/tools/sdp_hostile $(BUILD)/tools/sdp_wirefuzz: $(PEER_SRC) $(PEER_SRC:.c=.h)

$(BUILD)/shims/%.so: userspace-tests/shims/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_USER) -shared -fPIC -o $@ $< -ldl

$(INTERPOSER): $(TIRPC_SDP_SRC) libtirpc-patches/rpc_sdp.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_USER) $(TIRPC_CFLAGS) -shared -fPIC -fvisibility=hidden \
		-o $@ $(TIRPC_SDP_SRC) -ltirpc -ldl -lpthread

$(BUILD)/rpc/%: userspace-tests/rpc/%.c userspace-tests/rpc/sdp_rpc_bw.h userspace-tests/rpc/sdp_bw_proto.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_USER) $(TIRPC_CFLAGS) -o $@ $< -ltirpc -lpthread

# The in-kernel test modules (read_sock.sh, rx_nomem.sh, reuseport.sh): a
# copy of their folder under build/.../KVER, built for KVER with W=1 and
# sparse, and never installed (the tests insmod them from there).  They
# share the plumbing of their debugfs files (sdp_ktest.h) with the RPC
# client.
KTEST_HDR := userspace-tests/lib/sdp_ktest.h
RST_SRC := $(wildcard userspace-tests/kmod-read-sock/*.c) userspace-tests/kmod-read-sock/Kbuild
RST_DIR := $(BUILD)/kmod-read-sock/$(KVER)
read-sock-test: $(RST_DIR)/sdp_read_sock_test.ko

$(RST_DIR)/sdp_read_sock_test.ko: $(RST_SRC) $(KTEST_HDR) $(KMOD_COMPAT) $(wildcard kmod/include/uapi/linux/*.h)
	@rm -rf $(RST_DIR) && mkdir -p $(RST_DIR)
	@cp $(RST_SRC) $(RST_DIR)/
	@$(MAKE) -C $(KDIR) M=$(RST_DIR) SDP_INCLUDE=$(TOP)/kmod/include \
		SDP_KTEST_INCLUDE=$(TOP)/userspace-tests/lib SDP_KMOD=$(TOP)/kmod C=1 W=1 modules \
		>$(RST_DIR)/build.log 2>&1 || { cat $(RST_DIR)/build.log; exit 1; }
	@if grep -E 'warning:|error:' $(RST_DIR)/build.log; then rm -f $(RST_DIR)/*.ko; exit 1; fi
	@echo "read-sock-test: $@"

# The kernel ends of the RPC bandwidth program (rpc_kernel.sh, the bench),
# built the same way; they share the program's header with the libtirpc
# programs.
KRPC_SRC := $(wildcard userspace-tests/kmod-rpc-bw/*.c userspace-tests/kmod-rpc-bw/*.h) \
	    userspace-tests/kmod-rpc-bw/Kbuild
KRPC_HDR := userspace-tests/rpc/sdp_bw_proto.h
KRPC_COMPAT := userspace-tests/kmod-rpc-bw/sdp_krpc_svc_compat.h
KRPC_LINT := $(filter %.c %.h,$(KRPC_SRC)) $(KRPC_HDR) $(filter %.c,$(RST_SRC)) $(KTEST_HDR)
KRPC_DIR := $(BUILD)/kmod-rpc-bw/$(KVER)
krpc-bw-test: $(KRPC_DIR)/sdp_krpc_bw_server.ko

$(KRPC_DIR)/sdp_krpc_bw_server.ko: $(KRPC_SRC) $(KRPC_HDR) $(KTEST_HDR) $(KMOD_COMPAT)
	@rm -rf $(KRPC_DIR) && mkdir -p $(KRPC_DIR)
	@cp $(KRPC_SRC) $(KRPC_DIR)/
	@$(MAKE) -C $(KDIR) M=$(KRPC_DIR) SDP_RPC_INCLUDE=$(TOP)/userspace-tests/rpc \
		SDP_KTEST_INCLUDE=$(TOP)/userspace-tests/lib SDP_KMOD=$(TOP)/kmod C=1 W=1 modules \
		>$(KRPC_DIR)/build.log 2>&1 || { cat $(KRPC_DIR)/build.log; exit 1; }
	@if grep -E 'warning:|error:' $(KRPC_DIR)/build.log; then rm -f $(KRPC_DIR)/*.ko; exit 1; fi
	@echo "krpc-bw-test: $(KRPC_DIR)/sdp_krpc_bw_server.ko $(KRPC_DIR)/sdp_krpc_bw_client.ko"

# The patched SunRPC modules, for the tests to insmod before DKMS installs
# them; where the kernel source is missing, one line says how to get it.
SUNRPC_OUT := $(BUILD)/sunrpc/$(KVER)
sunrpc-modules: $(SUNRPC_OUT)/sunrpc.ko

$(SUNRPC_OUT)/sunrpc.ko: $(SUNRPC_SRC) dkms.conf
	@if sunrpc-patches/build --check $(KVER); then \
		sunrpc-patches/build --out $(SUNRPC_OUT) $(KVER); fi

clean:
	$(MAKE) -C $(KDIR) M=$(TOP) clean || true
	rm -rf $(BUILD)

endif # KROOT
endif # KVER
