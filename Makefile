# SPDX-License-Identifier: LGPL-2.1-or-later
# thaw: secure resume from encrypted hibernation images.

PREFIX    ?= /usr
SBINDIR   ?= $(PREFIX)/sbin
MANDIR    ?= $(PREFIX)/share/man
DRACUTDIR ?= $(PREFIX)/lib/dracut/modules.d
SLEEPDIR  ?= $(PREFIX)/lib/systemd/system-sleep
UNITDIR   ?= $(PREFIX)/lib/systemd/system
# The cloud's hibernate triggers, which an image builder copies into /etc (README: In a cloud image).
CLOUDDIR  ?= $(PREFIX)/share/thaw/cloud
DESTDIR   ?=
# libcryptsetup loads token plugins from here (Debian: /lib/x86_64-linux-gnu/cryptsetup).
TOKENDIR  ?= $(shell pkg-config --variable=libdir libcryptsetup 2> /dev/null)/cryptsetup
VERSION   := 0.1.0

B        ?= build
CC       ?= cc
PKGS     := libcryptsetup libkeyutils json-c blkid zlib lzo2 liblz4 \
            tss2-esys tss2-mu tss2-rc tss2-tctildr libcrypto
# Only the header: the imds: key source loads libcurl with dlopen() when it is used.
DLPKGS   := libcurl
WARN     := -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -D_GNU_SOURCE $(WARN) -Iresume -Icrypto -DTHAW_VERSION='"$(VERSION)"' \
            $(shell pkg-config --cflags $(PKGS) $(DLPKGS) 2> /dev/null)
ifeq ($(CI),true)
CFLAGS   += -Werror
endif
LDLIBS   := $(shell pkg-config --libs $(PKGS) 2> /dev/null)
SAN      := -fsanitize=address,undefined -fno-omit-frame-pointer

# The program is resume/cmd/ (main and one file per subcommand); every other file is the library.
PROG_SRC := $(wildcard resume/cmd/*.c)
PLUGIN_SRC := crypto/token_plugin.c
LIB_SRC  := $(filter-out $(PROG_SRC) $(PLUGIN_SRC),$(wildcard resume/*.c resume/*/*.c crypto/*.c))
# libcryptsetup loads libcryptsetup-token-<type>.so for a token of <type>: one link per thaw-* type.
TOKEN_TYPES := fwcfg keyfile smbios drive imds tpm2 passphrase
PLUGIN   := $(B)/tokens/libcryptsetup-token-thaw.so
PLUGIN_LINKS := $(TOKEN_TYPES:%=$(B)/tokens/libcryptsetup-token-thaw-%.so)
UNIT_SRC := $(wildcard test/unit/test_*.c)

all: $(B)/thaw $(PLUGIN) $(PLUGIN_LINKS)

# The library in four builds: normal, position-independent (the token plugin), ASan/UBSan (unit
# and host tests), libFuzzer (test/fuzz/). $(call lib_variant,DIR,CC variable,flags variable)
# gives $(B)/DIRobj/%.o and $(B)/DIRlibthaw.a; -MMD -MP writes each object's header dependencies
# beside it (.d, included below).
define lib_variant
$(B)/$(1)obj/%.o: %.c
	@mkdir -p $$(dir $$@)
	$$($(2)) $$($(3)) -MMD -MP -c -o $$@ $$<

# kconfig.c embeds kernel/thaw.config (.incbin, a path relative to this directory).
$(B)/$(1)obj/resume/system/kconfig.o: kernel/thaw.config

$(B)/$(1)libthaw.a: $$(LIB_SRC:%.c=$(B)/$(1)obj/%.o)
	$$(AR) rcs $$@ $$^

DEPS += $$(patsubst %.c,$(B)/$(1)obj/%.d,$$(LIB_SRC) $$(PROG_SRC) $$(PLUGIN_SRC))
endef

LIB_FLAGS  = $(CPPFLAGS) $(CFLAGS)
PIC_FLAGS  = $(CPPFLAGS) $(CFLAGS) -fPIC
ASAN_FLAGS = $(CFLAGS) $(SAN)
FUZZ_CC      ?= clang
FUZZ_FLAGS   := $(filter-out -Werror -O2,$(CFLAGS)) -O1 -fno-omit-frame-pointer
FUZZ_LIB_FLAGS = $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link,address,undefined

$(eval $(call lib_variant,,CC,LIB_FLAGS))
$(eval $(call lib_variant,pic/,CC,PIC_FLAGS))
$(eval $(call lib_variant,asan/,CC,ASAN_FLAGS))
$(eval $(call lib_variant,fuzz/,FUZZ_CC,FUZZ_LIB_FLAGS))

$(B)/thaw: $(PROG_SRC:%.c=$(B)/obj/%.o) $(B)/libthaw.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The token plugin links the position-independent build of the library.
$(PLUGIN): $(B)/pic/obj/$(PLUGIN_SRC:.c=.o) $(B)/pic/libthaw.a crypto/token_plugin.sym
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -fPIC -shared -Wl,--version-script=crypto/token_plugin.sym -Wl,-z,defs -Wl,--as-needed \
		-o $@ $(B)/pic/obj/$(PLUGIN_SRC:.c=.o) $(B)/pic/libthaw.a $(LDLIBS)

$(PLUGIN_LINKS): $(PLUGIN)
	ln -sf $(notdir $(PLUGIN)) $@

# Unit tests and the host tests' thaw link against the ASan/UBSan build of the library, built once.
$(B)/asan/test/unit/%: test/unit/%.c $(B)/asan/libthaw.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN) -Itest/unit -MMD -MP -o $@ $< $(B)/asan/libthaw.a $(LDLIBS) $(shell pkg-config --libs cmocka)

$(B)/asan/thaw: $(PROG_SRC:%.c=$(B)/asan/obj/%.o) $(B)/asan/libthaw.a
	$(CC) $(CFLAGS) $(SAN) -o $@ $^ $(LDLIBS)

UNIT_BIN := $(UNIT_SRC:%.c=$(B)/asan/%)

# libFuzzer harnesses (test/fuzz/): clang, the library built with coverage and ASan/UBSan.
FUZZ_SECONDS ?= 60
FUZZ_BIN     := $(B)/fuzz/fuzz_image $(B)/fuzz/fuzz_args $(B)/fuzz/fuzz_keysrc $(B)/fuzz/fuzz_provconf

$(B)/fuzz/%: test/fuzz/%.c $(B)/fuzz/libthaw.a
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer,address,undefined -MMD -MP -o $@ $< $(B)/fuzz/libthaw.a $(LDLIBS)

DEPS += $(UNIT_BIN:=.d) $(FUZZ_BIN:=.d)
-include $(DEPS)

fuzz: $(FUZZ_BIN)
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_OUT=$(B)/fuzz/out test/fuzz/run.sh $(FUZZ_BIN)

# A short run inside make check, when clang can link libFuzzer here.
fuzz-brief:
	@if printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n);\nint LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' \
		| $(FUZZ_CC) -fsanitize=fuzzer -x c -o /dev/null - 2> /dev/null; then \
		$(MAKE) --no-print-directory $(FUZZ_BIN) && \
		FUZZ_RUNS=20000 FUZZ_OUT=$(B)/fuzz/out test/fuzz/run.sh $(FUZZ_BIN); \
	else echo "fuzz: skipped, $(FUZZ_CC) cannot link libFuzzer"; fi

deps:
	test/deps.sh

# Unit tests (cmocka, fixture trees) and host tests of LUKS2 work on image files, the kernel tree
# check, lint and a brief fuzz: five parts that share nothing (temporary directories and ports of
# their own), so make -j runs them side by side, and -Orecurse keeps each part's output together
# (fuzz-brief's too, which runs make).
check: check-unit check-host check-kernel check-lint fuzz-brief
check-unit: all $(UNIT_BIN)
	test/run-unit.sh $(UNIT_BIN)
check-host: all $(B)/asan/thaw
	THAW=$(B)/asan/thaw THAW_TOKENS=$(B)/tokens test/host/run.sh
check-kernel:
	test/kernel/t-check-tree.sh
check-lint:
	test/lint.sh

# QEMU scenarios, test/qemu's and test/cloud's: make check-qemu [ONLY=name]
check-qemu: all
	test/qemu/run.sh $(ONLY)

# test/cloud's QEMU scenarios alone (a Debian 12 systemd root built with mmdebstrap, thaw from its
# package, set up by thaw provision): make check-cloud [ONLY=name]; make check-qemu runs them too.
CLOUD_SCENARIOS := $(patsubst test/cloud/%/run.sh,%,$(wildcard test/cloud/*/run.sh))
check-cloud: all
	test/qemu/run.sh $(or $(ONLY),$(CLOUD_SCENARIOS))

# The swapoff readahead benchmark (kernel/bench/): builds Debian's 6.1 twice, boots QEMU; not
# part of make test (about an hour the first time, see README.md).
bench-kernel: deps
	$(MAKE) all
	kernel/bench/run.sh

# make check builds its programs (three builds: release, ASan, fuzz) one per core.
test: deps
	$(MAKE) -j$$(nproc) -Orecurse -k check
	$(MAKE) check-qemu

# Not part of make test: swapoff vs thaw swapin vs nothing in one VM run, table in $(B)/bench-swapin.txt.
bench-swapin: all
	BENCH_OUT=$(B)/bench-swapin.txt test/bench/bench-swapin/bench.sh

# Not part of make test: the whole round trip, hibernate to the workload back at 90%, stock dracut
# (crypt, resume) against thaw and its alternatives; ROUNDS= rounds (default 3), table in $(B)/bench-roundtrip.txt.
ROUNDS ?= $(or $(BENCH_ROUNDS),3)
bench-roundtrip: all
	BENCH_OUT=$(B)/bench-roundtrip.txt BENCH_ROUNDS=$(ROUNDS) test/bench/bench-roundtrip/bench.sh

# Not part of make test: thaw hibernate's defaults vs --reclaim vs --image-size 0, table in $(B)/bench-hibernate.txt.
bench-hibernate: all
	BENCH_OUT=$(B)/bench-hibernate.txt test/bench/bench-hibernate/bench.sh

# Not part of make test: SOAK_ROUNDS round trips, each boot tried once, hangs counted by signature
# (configuration: TQ_SMP, TQ_ACCEL, TQ_CPU, SOAK_APPEND, TQ_KERNEL_PKG); lines added to $(B)/soak.txt.
soak: all
	SOAK_OUT=$(B)/soak.txt test/bench/soak.sh $(SOAK_ROUNDS)

demo: deps
	$(MAKE) all
	test/bench/demo.sh

install: all
	install -D -m 0755 $(B)/thaw $(DESTDIR)$(SBINDIR)/thaw
	install -d $(DESTDIR)$(DRACUTDIR)/90thaw
	for f in dracut-module/90thaw/*; do \
		case $$f in *.sh) m=0755 ;; *) m=0644 ;; esac; \
		install -m $$m $$f $(DESTDIR)$(DRACUTDIR)/90thaw/ || exit 1; \
	done
	install -D -m 0644 man/thaw.8 $(DESTDIR)$(MANDIR)/man8/thaw.8
	install -D -m 0644 man/thaw.conf.5 $(DESTDIR)$(MANDIR)/man5/thaw.conf.5
	install -D -m 0644 man/thaw.cmdline.7 $(DESTDIR)$(MANDIR)/man7/thaw.cmdline.7
	install -D -m 0644 man/thaw-provision.conf.5 $(DESTDIR)$(MANDIR)/man5/thaw-provision.conf.5
	install -D -m 0644 cloud/thaw-provision.service $(DESTDIR)$(UNITDIR)/thaw-provision.service
	install -D -m 0644 cloud/thaw-hibernate-request.service $(DESTDIR)$(UNITDIR)/thaw-hibernate-request.service
	install -d $(DESTDIR)$(CLOUDDIR)
	install -m 0644 cloud/90-thaw-hyperv-hibernate.rules cloud/thaw-sleep-button.conf cloud/thaw-sleep-button \
		$(DESTDIR)$(CLOUDDIR)/
	install -D -m 0644 $(PLUGIN) $(DESTDIR)$(TOKENDIR)/$(notdir $(PLUGIN))
	for t in $(TOKEN_TYPES); do ln -sf $(notdir $(PLUGIN)) $(DESTDIR)$(TOKENDIR)/libcryptsetup-token-thaw-$$t.so; done
	install -D -m 0755 dracut-module/system-sleep/thaw.sh $(DESTDIR)$(SLEEPDIR)/thaw

uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/thaw $(DESTDIR)$(MANDIR)/man8/thaw.8 \
		$(DESTDIR)$(MANDIR)/man5/thaw.conf.5 $(DESTDIR)$(MANDIR)/man7/thaw.cmdline.7 \
		$(DESTDIR)$(MANDIR)/man5/thaw-provision.conf.5 \
		$(DESTDIR)$(UNITDIR)/thaw-provision.service $(DESTDIR)$(UNITDIR)/thaw-hibernate-request.service \
		$(DESTDIR)$(TOKENDIR)/$(notdir $(PLUGIN)) $(TOKEN_TYPES:%=$(DESTDIR)$(TOKENDIR)/libcryptsetup-token-thaw-%.so)
	rm -f $(DESTDIR)$(SLEEPDIR)/thaw
	rm -rf $(DESTDIR)$(DRACUTDIR)/90thaw $(DESTDIR)$(CLOUDDIR)

clean:
	rm -rf $(B)

.PHONY: all deps check check-unit check-host check-kernel check-lint check-qemu check-cloud test demo install uninstall clean fuzz fuzz-brief bench-kernel bench-swapin bench-hibernate bench-roundtrip soak
