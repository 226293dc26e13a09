-- lib/redis/lua/put.lua - one key and its value into a bucket: a notify
-- cell's failure record.  ARGV: key, value.  KEYS: the bucket's four
-- (common.lua).  Returns {0}.
put(ARGV[1], ARGV[2])
return {0}
