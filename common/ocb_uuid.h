/* ocb_uuid: random identifiers (a run's uuid). */
#ifndef OCB_UUID_H
#define OCB_UUID_H

/* An RFC 4122 version-4 UUID ("xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx") from
 * /dev/urandom into out; if the kernel's random source cannot be read, from the clock
 * and the pid (still unique per process and nanosecond). Never fails. */
void ocb_uuid_v4(char out[37]);

#endif
