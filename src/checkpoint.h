/* checkpoint.h -- the size bound of a handler's checkpoint, shared by the
 * control channel (control.c, which takes it from descriptor 3) and the
 * configuration loader (conf_argmax.c, which counts it among what an exec
 * passes as JOBQ_CHECKPOINT).  A header alone, with no .c: both may
 * include it without depending on each other. */
#ifndef JOBQ_CHECKPOINT_H
#define JOBQ_CHECKPOINT_H

#define CHECKPOINT_MAX 65536 /* bytes of a checkpoint, as compact JSON */

#endif
