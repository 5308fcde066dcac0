/* hlorun/custom_call_status.h: status reporting for legacy custom calls
 * (api_version 2 and 3), with the names and signatures of XLA's
 * xla/service/custom_call_status.h.
 *
 * The host defines the functions: hlorun exports them from libhlorun and from
 * the hlorun command, so a plugin only declares them (this header) and links
 * against nothing. The status object is opaque to the plugin.
 */
#ifndef HLORUN_CUSTOM_CALL_STATUS_H
#define HLORUN_CUSTOM_CALL_STATUS_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct XlaCustomCallStatus_ XlaCustomCallStatus;

/* Mark the call as successful (clears an earlier failure). */
void XlaCustomCallStatusSetSuccess(XlaCustomCallStatus *status);
/* Mark the call as failed. The message is copied: at most message_len bytes,
 * stopping early at a NUL. */
void XlaCustomCallStatusSetFailure(XlaCustomCallStatus *status, const char *message,
                                   size_t message_len);

#ifdef __cplusplus
}
#endif
#endif
