-- jobq schema, version 17: dashboard users kept in the database.
--
-- Admins add, remove and change users from the dashboard's Users page or
-- with `jobq user`, without editing jobq.ini on every host.  A user is a
-- name, an argon2id hash (as `jobq passwd` makes) and a role.  The
-- [user NAME] sections of jobq.ini keep working, and win: a name there
-- cannot be added here.  A session stays tied to the hash it opened with
-- (sql/014): a new password or a removed user ends it.
CREATE TABLE IF NOT EXISTS jobq_users (
  username      VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  password_hash VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  role          VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  created_at    DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
  created_by    VARCHAR(64) NOT NULL DEFAULT '',
  changed_at    DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
  PRIMARY KEY (username)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
