1PRAGMA user_version=5;
