-- lib/redis/lua/find_commit.lua - the write record of transaction start8
-- in cell P (store.h's find_commit).  ARGV: P, start8.  KEYS: the
-- bucket's four (common.lua).
-- Returns {0, key, op} or {1} when there is none.
local f = find_commit(ARGV[1], ARGV[2])
if f then
	return {0, f[1], f[2]}
end
return {1}
