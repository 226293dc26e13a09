-- lib/redis/lua/raise.lua - raise gc's safe point, field 'g' of the hash
-- KEYS[1] (a bucket's, read by refuse_below_safe_point, or the table's
-- own), to ARGV[1], an 8-byte timestamp; never lower it; and drop the
-- entries at or below it from KEYS[2], given with a bucket's hash only:
-- that bucket's change log.  Returns the safe point.
local sp = redis.call('HGET', KEYS[1], 'g')
if not sp or not le8(ARGV[1], sp) then
	redis.call('HSET', KEYS[1], 'g', ARGV[1])
	sp = ARGV[1]
end
-- A bucket's change log keeps nothing at or below it (log_put).
if KEYS[2] then
	redis.call('ZREMRANGEBYLEX', KEYS[2], '-', '(L' .. sp .. '\255')
end
return sp
