/*
 * lib/redis/scripts.h - the Lua scripts of lib/redis/lua/, which make
 * turns into C strings redis_lua_NAME in scripts.c, from the Makefile's
 * one list of them (REDIS_LUA).  common is prepended to each script run
 * by EVALSHA when it is registered; oracle is a function library of its
 * own (oracle.c).  The scripts run by EVALSHA are named in scripts.def,
 * which make writes too: one SCRIPT(NAME, name) line each, for enum
 * rs_script (redis.h) and the table that store.c registers.
 */
#ifndef REDIS_SCRIPTS_H
#define REDIS_SCRIPTS_H

extern const char redis_lua_common[];
extern const char redis_lua_oracle[];
#define SCRIPT(NAME, name) extern const char redis_lua_##name[];
#include "scripts.def"
#undef SCRIPT
#endif
