/* version.h - the sparkprof version, written into every output's label. */
#ifndef SPARKPROF_VERSION_H
#define SPARKPROF_VERSION_H
#define SPARKPROF_VERSION "0.1.0"
#endif
