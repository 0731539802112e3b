module example.com/m

go 1.26.8
