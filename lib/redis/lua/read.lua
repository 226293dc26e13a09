-- lib/redis/lua/read.lua - the value of cell P visible at snapshot ts8
-- (store.h's read): the newest put or delete committed at or before it.
-- ARGV: P, ts8, known_start8 ('' when no fate is known), known_visible
-- ('1' when the known transaction committed at or before ts8).  KEYS:
-- the bucket's four (common.lua) and its fence (RS_FENCE, redis.h),
-- written so that the WAIT after this covers the version it read.
-- Returns {0, value}, {1} (no value), {2, lock record} (a lock that may
-- commit below ts8 is in the way), or {3, start8} (the data of a
-- committed put is missing).
refuse_below_safe_point(ARGV[2])
fence(function() redis.pcall('SET', KEYS[5], '1') end)
return read_cell(ARGV[1], ARGV[2], ARGV[3], ARGV[4], nil)
