// libmosquitto (Debian 12: 2.0.11, soname libmosquitto.so.1) for FencepostLinux's MQTT client,
// loaded at first use (dlopen) instead of linked: a board without a fleet link never maps it nor
// libssl/libcrypto (~2.2 MB resident). The prototypes are declared in mosquitto_loader.c from the
// library's stable 2.0 API, so a cross build needs neither the library nor its header.
//
// Callbacks: the loader installs its own C callbacks on every client; each turns the library's
// arguments (valid only during the callback) into one `cmq_event` and hands it to the one handler
// set with `cmq_set_handler`, with the client's `obj`. They run inside loop_read/loop_write/
// loop_misc on the caller's thread.
#ifndef C_MOSQUITTO_H
#define C_MOSQUITTO_H

#include <stdbool.h>
#include <stdint.h>

struct mosquitto;

/// What happened, as the callbacks saw it.
enum cmq_event_kind {
    /// CONNACK: `code` = reason code (0 accepted), `flags` bit 0 = session present.
    CMQ_CONNECT = 1,
    /// The connection ended: `code` = a MOSQ_ERR_* (0 = asked for) or a v5 DISCONNECT reason.
    CMQ_DISCONNECT = 2,
    /// QoS 1: PUBACK for `mid` with reason `code` (< 0x80 accepted); QoS 0: sent.
    CMQ_PUBLISH = 3,
    /// A message: `topic`, `payload`/`payload_length`, `qos`, `retain`; `has_expiry`/`expiry`
    /// (MQTT 5 Message Expiry, seconds left). Valid only during the handler.
    CMQ_MESSAGE = 4,
    /// SUBACK for `mid`: `granted_count` codes in `granted` (≥ 0x80 refused).
    CMQ_SUBSCRIBE = 5,
    /// A line of the library's log: `level` (MOSQ_LOG_*), `text`.
    CMQ_LOG = 6,
};

typedef struct cmq_event {
    int kind;
    int code;
    int flags;
    int mid;
    const char *topic;
    const void *payload;
    int payload_length;
    int qos;
    bool retain;
    bool has_expiry;
    uint32_t expiry;
    const int *granted;
    int granted_count;
    int level;
    const char *text;
} cmq_event;

typedef void (*cmq_handler)(void *obj, const cmq_event *event);

/// The soname loaded: libmosquitto.so.1, or `FENCEPOST_LIBMOSQUITTO` when set.
const char *cmq_soname(void);
/// Loads the library and calls mosquitto_lib_init (once). NULL when loaded, else why not.
const char *cmq_load(void);
/// The library's version, e.g. 2000011 for 2.0.11 (0 before a load).
int cmq_version(void);
/// The one handler of every client's events. Set before the first client is made.
void cmq_set_handler(cmq_handler handler);

/// mosquitto_new with MQTT 5, the send and receive maxima and the callbacks. NULL with errno.
struct mosquitto *cmq_new(const char *id, bool clean_start, void *obj, int send_maximum, int receive_maximum);
void cmq_destroy(struct mosquitto *m);
/// mosquitto_will_set_v5 with a Will Delay (seconds; 0 = none) and Message Expiry (0 = none).
int cmq_will_set(struct mosquitto *m, const char *topic, int length, const void *payload, int qos, bool retain, uint32_t delay, uint32_t expiry);
int cmq_username_pw_set(struct mosquitto *m, const char *username, const char *password);
/// mosquitto_tls_set (CA file, client certificate and key or NULL) and mosquitto_tls_opts_set
/// (peer verified, TLS 1.2 or newer).
int cmq_tls_set(struct mosquitto *m, const char *cafile, const char *certfile, const char *keyfile);
/// Stores the CONNECT properties (Session Expiry, seconds) for every later connect, with no I/O.
/// 2.0.11 has no asynchronous MQTT 5 connect (upstream #1835); mosquitto_connect_bind_v5 copies
/// its properties before it checks the keepalive, so a call with keepalive 1 fails with
/// MOSQ_ERR_INVAL before any I/O and leaves them for every later connect_bind_async.
/// Returns MOSQ_ERR_INVAL (3) when that happened as expected; anything else means the library
/// behaves otherwise (a test pins it: session present after a reconnect).
int cmq_store_connect_properties(struct mosquitto *m, const char *host, int port, uint32_t session_expiry);
/// mosquitto_connect_bind_async: name lookup (blocking), non-blocking TCP connect, CONNECT queued.
/// `port` 0: `host` is the path of a Unix socket.
int cmq_connect_async(struct mosquitto *m, const char *host, int port, int keepalive);
/// mosquitto_disconnect_v5 (reason 0x04 sends the Will).
int cmq_disconnect(struct mosquitto *m, int reason);
/// mosquitto_publish_v5 with a Message Expiry (seconds; 0 = none).
int cmq_publish(struct mosquitto *m, int *mid, const char *topic, int length, const void *payload, int qos, bool retain, uint32_t expiry);
int cmq_subscribe(struct mosquitto *m, int *mid, const char *filter, int qos);
int cmq_unsubscribe(struct mosquitto *m, int *mid, const char *filter);
int cmq_loop_read(struct mosquitto *m);
int cmq_loop_write(struct mosquitto *m);
int cmq_loop_misc(struct mosquitto *m);
int cmq_socket(struct mosquitto *m);
bool cmq_want_write(struct mosquitto *m);
const char *cmq_strerror(int code);
const char *cmq_reason_string(int code);

#endif
