#ifndef CFUZZSUPPORT_HEAPMETER_H
#define CFUZZSUPPORT_HEAPMETER_H

/* Peak heap growth over a stretch of code, through the sanitizer allocator's
   malloc and free hooks. Single-threaded: a fuzz target calls its parser on
   the thread libFuzzer runs it on. */

/* Starts a measurement at the current heap: growth is counted from here. */
void fuzz_heap_begin(void);

/* Ends the measurement: the most the heap grew, in bytes, since the last
   fuzz_heap_begin() (0 when nothing was allocated). */
long fuzz_heap_end(void);

#endif
