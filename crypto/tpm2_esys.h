/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* For thaw's other TPM2 files only (tpm2_counter.c): the ESYS context behind a struct tpm2. */
#pragma once
#include <tss2/tss2_esys.h>
#include "tpm2.h"

ESYS_CONTEXT *tpm2_esys(struct tpm2 *t);
/* Record rc as what failed for tpm2_error(): -ETIMEDOUT if the TPM stopped answering, else -EIO. */
int tpm2_fail(struct tpm2 *t, const char *what, TSS2_RC rc);
/* Set tpm2_error() to text. */
void tpm2_set_error(struct tpm2 *t, const char *text);
/* The TPM's own code without the session, handle or parameter number of format-1 codes. */
TSS2_RC tpm2_rc_base(TSS2_RC rc);
/*
 * A session salted with the storage primary key, its attributes attrs: parameters it encrypts
 * cross the bus encrypted. The primary key is flushed again; flush the session with Esys_FlushContext.
 */
int tpm2_salted_session(struct tpm2 *t, TPM2_SE type, TPMA_SESSION attrs, ESYS_TR *out);
