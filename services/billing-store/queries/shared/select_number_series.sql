-- Every number series (issue 24.3, verify): series (prefix), year, last number issued.
select series, year, last from number_series order by series, year
