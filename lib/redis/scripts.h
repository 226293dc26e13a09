/*
 * lib/redis_scripts.h - the Lua scripts of lib/redis/, which make turns
 * into C strings in lib/redis_scripts.c.  common is prepended to each
 * of the scripts when it is registered; oracle is a function library
 * of its own (oracle.c).
 */
#ifndef REDIS_SCRIPTS_H
#define REDIS_SCRIPTS_H

extern const char redis_lua_common[];
extern const char redis_lua_read[];
extern const char redis_lua_find_commit[];
extern const char redis_lua_prewrite[];
extern const char redis_lua_commit[];
extern const char redis_lua_rollback[];
extern const char redis_lua_put[];
extern const char redis_lua_range[];
extern const char redis_lua_raise[];
extern const char redis_lua_keep[];
extern const char redis_lua_push[];
extern const char redis_lua_scan[];
extern const char redis_lua_oracle[];
#endif
