-- jobq schema, version 7: the dashboard (`jobq serve`).
--
-- Sessions live in the database, so several `jobq serve` behind a load
-- balancer share them and a restart logs nobody out.  The cookie holds a
-- random 32-byte token; only its SHA-256 is stored, so a copy of this
-- table opens no session.

CREATE TABLE IF NOT EXISTS jobq_sessions (
  token_hash  CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  username    VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  csrf_token  CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  remember    TINYINT NOT NULL DEFAULT 0,
  address     VARCHAR(64) NOT NULL DEFAULT '',
  created_at  DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
  expires_at  DATETIME(6) NOT NULL,
  PRIMARY KEY (token_hash),
  KEY jobq_sessions_expires (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Failed logins, for the rate limit per user and per address.
CREATE TABLE IF NOT EXISTS jobq_login_failures (
  id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  username    VARCHAR(64) NOT NULL,
  address     VARCHAR(64) NOT NULL,
  at          DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
  PRIMARY KEY (id),
  KEY jobq_login_failures_user (username, at),
  KEY jobq_login_failures_addr (address, at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Every action an administrator took in the dashboard: who, when, what,
-- on which job (job_id NULL for actions on many jobs; detail says which).
CREATE TABLE IF NOT EXISTS jobq_audit (
  id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  at          DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
  username    VARCHAR(64) NOT NULL,
  address     VARCHAR(64) NOT NULL DEFAULT '',
  action      VARCHAR(32) CHARACTER SET ascii NOT NULL,
  job_id      BIGINT UNSIGNED NULL,
  detail      VARCHAR(1024) NOT NULL DEFAULT '',
  PRIMARY KEY (id),
  KEY jobq_audit_job (job_id, id),
  KEY jobq_audit_at (at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
