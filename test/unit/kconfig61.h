/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Debian's 6.1 kernel config as far as kernel/thaw.config names it: for kconfig.c and doctor.c. */
#pragma once

/* The options of Debian's 6.1.0-57-amd64 config that kernel/thaw.config names (as Debian sets them). */
static const char debian_61_config[] =
        "#\n# Automatically generated file; DO NOT EDIT.\n#\n"
        "CONFIG_HIBERNATE_CALLBACKS=y\nCONFIG_HIBERNATION=y\nCONFIG_HIBERNATION_SNAPSHOT_DEV=y\n"
        "CONFIG_SWAP=y\nCONFIG_BLK_DEV_DM=m\nCONFIG_DM_CRYPT=m\nCONFIG_DM_INTEGRITY=m\n"
        "CONFIG_CRYPTO_XTS=m\nCONFIG_CRYPTO_AES=y\nCONFIG_CRYPTO_SHA256=y\nCONFIG_CRYPTO_LZO=y\n"
        "CONFIG_CRYPTO_LZ4=m\nCONFIG_KEYS=y\nCONFIG_CRYPTO_USER_API_SKCIPHER=m\nCONFIG_TCG_TPM=y\n"
        "CONFIG_TCG_TIS=y\nCONFIG_TCG_CRB=y\nCONFIG_FW_CFG_SYSFS=m\nCONFIG_VIRTIO_BLK=m\n"
        "# CONFIG_IKCONFIG is not set\nCONFIG_LOCALVERSION=\"\"\n";

#define REL "6.1.0-57-amd64"
