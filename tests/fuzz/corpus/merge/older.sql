1PRAGMA user_version=3;
