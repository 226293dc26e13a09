-- lib/redis/lua/raise.lua - raise gc's safe point, field 'g' of the hash
-- KEYS[1] (a bucket's, read by refuse_below_safe_point, or the table's
-- own), to ARGV[1], an 8-byte timestamp; never lower it.  Returns the
-- safe point.
local sp = redis.call('HGET', KEYS[1], 'g')
if not sp or not le8(ARGV[1], sp) then
	redis.call('HSET', KEYS[1], 'g', ARGV[1])
	sp = ARGV[1]
end
return sp
