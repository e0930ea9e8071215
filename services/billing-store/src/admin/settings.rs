//! Settings: named values the engines of one database share (e.g. the fleet's identity).

use crate::conn::error::Result;
use crate::conn::handles::AdminHandle;

impl AdminHandle<'_> {
    pub async fn setting(&self, name: &str) -> Result<Option<String>> {
        let row = crate::conn::db::query(include_str!("../../queries/shared/select_setting.sql"))
            .bind(name)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.map(|r| r.get::<String, _>("value")))
    }

    /// Sets `name` only when unset; returns the value that holds.
    pub async fn setting_or_insert(&self, name: &str, value: &str) -> Result<String> {
        crate::conn::db::query(include_str!("../../queries/shared/insert_setting.sql"))
            .bind(name)
            .bind(value)
            .execute(&self.pool)
            .await?;
        Ok(self
            .setting(name)
            .await?
            .unwrap_or_else(|| value.to_string()))
    }
}
