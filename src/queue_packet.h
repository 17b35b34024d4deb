/* queue_packet.h -- the sizes an outcome's statements are kept within
 * (queue_outcome.c), and the check of the handlers' output limits
 * against the server's packet (queue_packet.c). */
#ifndef JOBQ_QUEUE_PACKET_H
#define JOBQ_QUEUE_PACKET_H

/* Kept free under max_allowed_packet: the command byte and slack. */
#define PACKET_SLACK 1024
/* The most one outcome's statements take besides the handler's texts:
 * the SQL, the moving-aside of an older dead-letter, the release of the
 * jobs that wait for it, the names, token, worker id, exit words, reason
 * and run times, each escaped. */
#define OUTCOME_FIXED_MAX 16384

#endif
